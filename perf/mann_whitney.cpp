#include "perf/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace cplab::perf {
namespace {

// P(U <= u) for samples of sizes m and n without ties: counts of rank arrangements by U, built
// with the recurrence f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u) over all (m, n).
double exact_cdf(int m, int n, int u) {
  // ways[i][j][k]: arrangements of i first-sample and j second-sample values with U = k.
  const int max_u = m * n;
  std::vector<std::vector<std::vector<double>>> ways(
      static_cast<std::size_t>(m + 1),
      std::vector<std::vector<double>>(static_cast<std::size_t>(n + 1),
                                       std::vector<double>(static_cast<std::size_t>(max_u + 1))));
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      if (i == 0 || j == 0) {
        ways[i][j][0] = 1.0;
        continue;
      }
      for (int k = 0; k <= i * j; ++k) {
        // The largest value comes from the first sample (it beats all j) or from the second.
        ways[i][j][k] = (k >= j ? ways[i - 1][j][k - j] : 0.0) + ways[i][j - 1][k];
      }
    }
  }
  double below = 0.0, total = 0.0;
  for (int k = 0; k <= max_u; ++k) {
    total += ways[m][n][k];
    if (k <= u) below += ways[m][n][k];
  }
  return below / total;
}

}  // namespace

UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  UTest out;
  const auto m = static_cast<double>(a.size()), n = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return out;
  // Midranks of the pooled sample, and the tie term of the variance.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0.0, ties = 0.0;
  bool tied = false;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const auto t = static_cast<double>(j - i);
    if (t > 1) tied = true;
    ties += t * t * t - t;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_a += midrank;
    }
    i = j;
  }
  out.u = rank_sum_a - m * (m + 1) / 2.0;
  const double u_low = std::min(out.u, m * n - out.u);
  if (!tied && a.size() * b.size() <= 400) {
    out.exact = true;
    out.p_value =
        std::min(1.0, 2.0 * exact_cdf(static_cast<int>(a.size()), static_cast<int>(b.size()),
                                      static_cast<int>(std::lround(u_low))));
    return out;
  }
  const double total = m + n;
  const double variance = m * n / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
  if (variance <= 0.0) return out;  // every value equal: no evidence of a difference
  const double z = (std::abs(out.u - m * n / 2.0) - 0.5) / std::sqrt(variance);
  out.p_value = std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
  return out;
}

}  // namespace cplab::perf
