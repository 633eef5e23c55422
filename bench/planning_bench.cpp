// Planning as the row grows: each rank's partition (sim::partition_rank: stream, index map,
// positions, documents) per registered layout, with Google Benchmark's complexity fit, against
// writing the index map once (std::iota of the same ℓ slots); and magi's greedy assignment from
// 10³ to 10⁶ chunks (O(n log n)) against std::sort of as many chunk areas.
#include <algorithm>
#include <numeric>
#include <random>

#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "core/error.hpp"
#include "layouts/partition.hpp"
#include "reference/plan.hpp"

namespace cplab::bench {
namespace {

constexpr std::int64_t kCp = 8;

void BM_plan(benchmark::State& state, const std::string& layout) {
  const std::int64_t len = state.range(0);
  RowPartition part;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    part = partition_row(layout, kCp, len);
    benchmark::DoNotOptimize(part.ranks.data());
    seconds += seconds_since(start);
  }
  state.SetComplexityN(len);
  report_items(state, len);
  // Baseline: every rank's index map written once.
  std::vector<std::int64_t> slots(static_cast<std::size_t>(part.padded_len));
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRepeats = 20;
  for (int i = 0; i < kRepeats; ++i) {
    std::iota(slots.begin(), slots.end(), std::int64_t{i});
    benchmark::DoNotOptimize(slots.data());
  }
  report_ratio(state, seconds, seconds_since(start) / kRepeats);
  // The maps of all ranks together hold every slot of the stream exactly once.
  std::vector<int> seen(static_cast<std::size_t>(part.padded_len), 0);
  for (const ShardLayout& r : part.ranks) {
    for (std::int64_t g : r.index[0]) {
      if (g < 0 || g >= part.padded_len || seen[g]++ != 0) {
        state.SkipWithError("plan: the ranks' index maps are not a permutation of the stream");
        return;
      }
    }
  }
}

// The reference's plan of one BSHD row (what `cplab layout` and `explain` make) as S grows to 16M
// tokens, in thread CPU seconds against writing the same L slots once (std::iota); items/s is
// tokens planned per second on one core.
void BM_reference_plan(benchmark::State& state, const std::string& layout) {
  const std::int64_t len = state.range(0);
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = kCp;
  RowPlan row;
  double seconds = 0.0;
  for (auto _ : state) {
    row = RowPlan{};  // the previous plan's memory returned first, as a command would start
    const double start = thread_cpu_seconds();
    row = reference::plan_row(spec, len);
    benchmark::DoNotOptimize(row.index.data());
    const double spent = thread_cpu_seconds() - start;
    state.SetIterationTime(spent);
    seconds += spent;
  }
  state.SetComplexityN(len);
  report_items(state, len);
  std::vector<std::int64_t> slots(static_cast<std::size_t>(row.padded_len));
  const double start = thread_cpu_seconds();
  std::iota(slots.begin(), slots.end(), std::int64_t{0});
  benchmark::DoNotOptimize(slots.data());
  report_ratio(state, seconds, thread_cpu_seconds() - start);
  state.counters["tokens_per_s"] =
      seconds > 0 ? static_cast<double>(len) * static_cast<double>(state.iterations()) / seconds
                  : 0.0;
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(row.padded_len), 0);
  for (const auto& rank : row.index) {
    for (std::int64_t g : rank) {
      if (g < 0 || g >= row.padded_len || seen[g]++ != 0) {
        state.SkipWithError("plan: the ranks' index maps are not a permutation of the stream");
        return;
      }
    }
  }
}

void BM_magi_assign(benchmark::State& state) {
  const std::int64_t chunks = state.range(0);
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> areas(static_cast<std::size_t>(chunks));
  for (auto& a : areas) a = static_cast<std::int64_t>(rng() % 100000);
  std::vector<std::vector<std::int64_t>> owned;
  // Both sides in thread CPU seconds (single-threaded work on a shared machine), the sort as the
  // best of three.
  double seconds = 0.0;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    owned = sim::greedy_assign(areas, kCp);
    benchmark::DoNotOptimize(owned.data());
    const double spent = thread_cpu_seconds() - start;
    state.SetIterationTime(spent);  // the complexity fit then fits CPU seconds too
    seconds += spent;
  }
  state.SetComplexityN(chunks);
  report_items(state, chunks);
  double sort_seconds = 1e30;
  for (int i = 0; i < 3; ++i) {
    std::vector<std::int64_t> sorted = areas;
    const double start = thread_cpu_seconds();
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    benchmark::DoNotOptimize(sorted.data());
    sort_seconds = std::min(sort_seconds, thread_cpu_seconds() - start);
  }
  report_ratio(state, seconds, sort_seconds);
  state.counters["seconds"] = seconds / static_cast<double>(state.iterations());
  std::vector<int> seen(static_cast<std::size_t>(chunks), 0);
  for (const auto& mine : owned) {
    bool ok = static_cast<std::int64_t>(mine.size()) == chunks / kCp;
    for (std::int64_t c : mine) ok = ok && c >= 0 && c < chunks && seen[c]++ == 0;
    if (!ok) {
      state.SkipWithError("greedy assignment: not every rank holds n/C chunks, each chunk once");
      return;
    }
  }
}

}  // namespace

void register_planning_benchmarks() {
  for (const std::string& layout : layout_names()) {
    benchmark::RegisterBenchmark(("BM_plan/" + layout).c_str(), BM_plan, layout)
        ->RangeMultiplier(4)
        ->Range(1 << 12, 1 << 18)
        ->Complexity()
        ->UseRealTime();
  }
  // Layouts that lay out BSHD rows (thd and llama3-varlen need documents; identity needs C = 1).
  for (const std::string& layout : layout_names()) {
    LayoutSpec spec;
    spec.layout = layout;
    spec.cp = kCp;
    try {
      reference::plan_row(spec, 1 << 12);
    } catch (const Error&) {
      continue;
    }
    benchmark::RegisterBenchmark(("BM_reference_plan/" + layout).c_str(), BM_reference_plan, layout)
        ->RangeMultiplier(16)
        ->Range(1 << 12, 1 << 24)
        ->Complexity(benchmark::oN)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_magi_assign", BM_magi_assign)
      ->RangeMultiplier(10)
      ->Range(1000, 1000000)
      ->Complexity(benchmark::oNLogN)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
