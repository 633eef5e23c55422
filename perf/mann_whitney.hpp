#pragma once
// The Mann-Whitney U test on two samples of repeated measurements, as Google Benchmark's
// compare.py applies it to repetitions: two-sided; exact p-value for small samples without ties,
// else the normal approximation with tie and continuity corrections.
#include <vector>

namespace cplab::perf {

struct UTest {
  double u = 0.0;        // U of the first sample
  double p_value = 1.0;  // two-sided
  bool exact = false;
};

UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace cplab::perf
