#pragma once
// `cplab bench history`: one self-contained page (DIR/index.html, opens offline) with a chart per
// benchmark across the given runs (ordered by date): the median of the repetitions, their
// interquartile range as a noise band, and the runs a step rule flags as regressions. Drawn by
// Vega-Lite (npm, bundled into the page); the flagged regressions are listed as text too.
#include <string>
#include <vector>

#include "perf/bench_results.hpp"

namespace cplab::perf {

struct BenchHistoryArgs {
  std::vector<std::string> files;
  std::string out;
  double threshold_pct = 10.0;
};

// Step rule: run i is a regression of a benchmark when its median is worse than run i-1's by
// more than the threshold and falls outside run i-1's noise band (the interquartile range of its
// repetitions: one preempted repetition does not widen it).
struct HistoryPoint {
  std::string run;  // "3 · abc12345" (order · commit)
  double median = 0.0, lo = 0.0, hi = 0.0;
  bool regression = false;
};
std::vector<HistoryPoint> flag_steps(std::vector<HistoryPoint> points, bool higher_is_better,
                                     double threshold_pct);

// One chart's data: a benchmark across the runs that have finite values of it (in the runs'
// order), by its ratio where every run reports one, else by its time in ms; steps flagged.
struct HistorySeries {
  std::string name;
  bool ratio = true;
  std::vector<HistoryPoint> points;
};
// Every benchmark of the runs in the order it first appears; names are matched through the
// files' indexes (O(n log n) comparisons for n entries).
std::vector<HistorySeries> history_series(const std::vector<BenchFile>& runs, double threshold_pct);

int run_bench_history(const BenchHistoryArgs& args);

}  // namespace cplab::perf
