// `check --layout auto` at the scale users run it: shards of one 1,048,576-token row on 64 ranks
// under the first causally balanced layout (bench_layouts.hpp: head-tail today), the layout
// searched for (check::find_layout over every candidate) against checking the same shards under the
// layout named (one plan, one full comparison) in the same process. The search must name that
// layout with a full match.
#include <chrono>

#include "bench/bench_layouts.hpp"
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "check/layout_search.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::bench {
namespace {

struct AutoCase {
  Batch batch;
  std::vector<io::TensorFile> shards;
  LayoutSpec spec;
};

AutoCase balanced_case(std::int64_t seq, std::int64_t cp) {
  AutoCase c;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(seq)), labels(ids.size());
  for (std::int64_t t = 0; t < seq; ++t) {
    ids[t] = 1000 + t;
    labels[t] = 2000 + t;
  }
  c.batch.add(keys::input_ids, Tensor::from<std::int64_t>({1, seq}, ids));
  c.batch.add(keys::labels, Tensor::from<std::int64_t>({1, seq}, labels));
  c.spec.layout = a_balanced_layout();
  c.spec.cp = cp;
  const auto sharded = reference::shard_batch(reference::plan(c.spec, c.batch), c.batch);
  for (const Batch& local : sharded[0]) {
    io::TensorFile file;
    for (const auto& [key, field] : local.tokens) file.tensors[key] = field.value;
    c.shards.push_back(std::move(file));
  }
  return c;
}

void BM_check_auto(benchmark::State& state) {
  const std::int64_t seq = state.range(0), cp = state.range(1);
  const AutoCase c = balanced_case(seq, cp);
  LayoutSpec given;
  given.cp = cp;
  check::Verdict verdict;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    verdict = check::find_layout(given, {}, c.batch, c.shards, {});
    seconds += seconds_since(start);
  }
  // Baseline: the same shards checked under the layout named.
  const auto start = std::chrono::steady_clock::now();
  const check::Outcome named = check::check_shards(c.spec, c.batch, c.shards, {});
  report_ratio(state, seconds, seconds_since(start));
  report_items(state, seq);
  state.counters["candidates"] = static_cast<double>(verdict.candidates);
  state.counters["planned"] = static_cast<double>(verdict.planned);
  if (check::layout_brief(verdict.outcome.spec) != check::layout_brief(c.spec) ||
      verdict.outcome.score != 0 || named.score != 0) {
    state.SkipWithError("check auto: the shards are not named by their layout with a full match");
  }
}

}  // namespace

void register_check_benchmarks() {
  benchmark::RegisterBenchmark("BM_check_auto", BM_check_auto)
      ->Args({1 << 16, 8})
      ->Args({1 << 20, 64})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

}  // namespace cplab::bench
