// `cplab layout --json`'s writer (reports/json_text.hpp) on a planned row of S tokens, C = 8, of
// the first causally balanced layout (bench_layouts.hpp: head-tail today): every rank's indices and
// positions, written through its 1 MB buffer into a temporary file, against fwrite of the very
// bytes it wrote (collected once) in 1 MB calls into the same file (rewound each time: the page
// cache copy that `> out.json` costs; /dev/null would discard without copying). Target: within 2x
// of fwrite (times_fwrite <= 2). The text is checked against nlohmann's dump of the same lists,
// with and without runs of consecutive values, once after timing.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/bench_layouts.hpp"
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "layouts/row_acceptance.hpp"
#include "reference/plan.hpp"
#include "reports/json_text.hpp"

namespace cplab::bench {
namespace {

void write_lists(reports::JsonSink& sink, const RowPlan& row) {
  sink.put('[');
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    if (r != 0) sink.put(',');
    sink.ints(row.index[r]);
    sink.put(',');
    sink.ints_through(row.index[r], row.positions);
  }
  sink.put(']');
}

void BM_json_writer(benchmark::State& state) {
  LayoutSpec spec;
  spec.layout = a_balanced_layout();  // runs of two chunks per rank
  spec.cp = 8;
  const RowPlan row = reference::plan_row(spec, state.range(0));
  std::FILE* null = std::tmpfile();
  if (null == nullptr) {
    state.SkipWithError("cannot open a temporary file");
    return;
  }
  reports::JsonSink collected;
  write_lists(collected, row);
  const std::string& text = collected.text();
  double seconds = 0.0, fwrite_seconds = 0.0;
  for (auto _ : state) {
    std::rewind(null);
    double start = thread_cpu_seconds();
    reports::JsonSink sink(null);
    write_lists(sink, row);
    sink.finish();
    seconds += thread_cpu_seconds() - start;
    std::rewind(null);
    start = thread_cpu_seconds();
    constexpr std::size_t kStep = std::size_t{1} << 20;
    for (std::size_t at = 0; at < text.size(); at += kStep)
      std::fwrite(text.data() + at, 1, std::min(kStep, text.size() - at), null);
    std::fflush(null);
    fwrite_seconds += thread_cpu_seconds() - start;
  }
  std::fclose(null);
  const auto iterations = static_cast<double>(state.iterations());
  report_items(state, state.range(0));
  state.SetBytesProcessed(static_cast<std::int64_t>(text.size()) * state.iterations());
  report_ratio(state, seconds, fwrite_seconds / iterations);
  state.counters["times_fwrite"] = fwrite_seconds > 0 ? seconds / fwrite_seconds : 0.0;
  // The same bytes as nlohmann writes for the same lists, on rows small enough to build as json,
  // of every layout that takes them: among them lists of no runs (stripe: every value formatted
  // anew) and runs across 999 → 1000 and 9999 → 10000 (head-tail: the text that grows a digit in
  // place).
  for (const std::string& layout : reference::layout_names()) {
    for (const std::int64_t len : {4096, 10007}) {
      spec.layout = layout;
      if (!sim::accepts(spec, sim::bshd_row(len))) continue;  // a layout of packed rows
      const RowPlan small = reference::plan_row(spec, len);
      nlohmann::ordered_json lists = nlohmann::ordered_json::array();
      for (std::size_t r = 0; r < small.index.size(); ++r) {
        lists.push_back(small.index[r]);
        std::vector<std::int64_t> positions;
        for (std::int64_t g : small.index[r]) positions.push_back(small.positions[g]);
        lists.push_back(positions);
      }
      reports::JsonSink mine;
      write_lists(mine, small);
      if (mine.text() != lists.dump()) {
        state.SkipWithError("json writer: not the bytes nlohmann writes for the same lists");
        return;
      }
    }
  }
}

}  // namespace

void register_json_writer_benchmarks() {
  benchmark::RegisterBenchmark("BM_json_writer", BM_json_writer)
      ->Arg(1 << 20)
      ->Arg(1 << 24)
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
