#pragma once
// `cplab bench compare`: per benchmark present in both files, the change of its ratio to the
// same-process baseline (or of its time where it reports no ratio) between the medians of the
// repetitions, and the two-sided Mann-Whitney U p-value over the repetitions.
// A change needs two medians that are finite and above 0: a ratio of 0 is what a benchmark reports
// when it measured nothing (no baseline, no time), and no speed-up or slow-down is defined against
// it. Such a benchmark is "not comparable", never faster, slower or a regression.
// Matching is by name through the files' indexes: O(n log n) comparisons for n entries.
#include <string>
#include <vector>

#include "perf/bench_results.hpp"

namespace cplab::perf {

struct BenchChange {
  std::string name;
  std::string metric;            // "ratio" (higher is better) or "time" (lower is better)
  double base = 0.0, now = 0.0;  // medians
  bool comparable = false;       // both medians finite and > 0: change and verdict are defined
  double change = 0.0;           // now / base - 1, signed so that < 0 is worse for both metrics
  double p_value = 1.0;
  std::size_t base_n = 0, now_n = 0;
  std::size_t missing = 0;  // values of the two series read as missing (not finite)
  bool testable = false;    // enough repetitions for the U test to reach the significance level
  bool regression = false;
  std::string verdict;  // REGRESSION, faster, same, ... (rows with values)
  std::string note;     // failed / skipped / only in one file (rows without values)
};

struct CompareOptions {
  double threshold_pct = 10.0;
  double alpha = 0.05;
};

// Name comparisons made by the matching (both files' indexes) are counted by their NameIndex.
std::vector<BenchChange> compare_files(const BenchFile& base, const BenchFile& now,
                                       const CompareOptions& options);

}  // namespace cplab::perf
