// Planning as the row grows: each rank's partition (sim::partition_rank: stream, index map,
// positions, documents) per registered layout, with Google Benchmark's complexity fit, against
// writing the index map once (std::iota of the same ℓ slots); and magi's greedy assignment from
// 10³ to 10⁶ chunks (O(n log n)) against std::sort of as many chunk areas.
#include <algorithm>
#include <numeric>
#include <random>

#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "sim/partition.hpp"

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
      state.SkipWithError("magi: not every rank holds n/C chunks, each chunk once");
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
  benchmark::RegisterBenchmark("BM_magi_assign", BM_magi_assign)
      ->RangeMultiplier(10)
      ->Range(1000, 1000000)
      ->Complexity(benchmark::oNLogN)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
