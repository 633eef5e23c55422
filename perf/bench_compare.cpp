#include "perf/bench_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "perf/mann_whitney.hpp"

namespace cplab::perf {
namespace {

// The smallest two-sided p-value samples of these sizes can give (all of one below all of the
// other): when it is above alpha no outcome could be significant.
double smallest_p(std::size_t m, std::size_t n) {
  std::vector<double> a(m), b(n);
  for (std::size_t i = 0; i < m; ++i) a[i] = static_cast<double>(i);
  for (std::size_t j = 0; j < n; ++j) b[j] = static_cast<double>(m + j);
  return mann_whitney_u(a, b).p_value;
}

bool usable_median(double v) { return std::isfinite(v) && v > 0.0; }

std::string incomparable_verdict(const BenchChange& c) {
  const auto describe = [&](const char* which, double v) {
    return fmt::format("the {} median {} is {:g}", which, c.metric, v);
  };
  if (!usable_median(c.base)) return "not comparable: " + describe("base", c.base);
  return "not comparable: " + describe("new", c.now);
}

void judge(BenchChange& c, const std::vector<double>& xs, const std::vector<double>& ys,
           const CompareOptions& options) {
  c.base = median(xs);
  c.now = median(ys);
  c.base_n = xs.size();
  c.now_n = ys.size();
  c.comparable = usable_median(c.base) && usable_median(c.now);
  if (!c.comparable) {
    c.verdict = incomparable_verdict(c);
    return;
  }
  // Signed so that negative is worse: a ratio that fell, a time that grew.
  c.change = c.metric == "ratio" ? c.now / c.base - 1.0 : c.base / c.now - 1.0;
  c.testable = smallest_p(xs.size(), ys.size()) < options.alpha;
  c.p_value = mann_whitney_u(xs, ys).p_value;
  c.regression =
      c.testable && c.p_value < options.alpha && -c.change * 100.0 > options.threshold_pct;
  if (c.regression) {
    c.verdict = "REGRESSION";
  } else if (!c.testable) {
    c.verdict = "too few repetitions for the U test";
  } else if (c.p_value < options.alpha) {
    c.verdict = c.change < 0 ? "slower (within threshold)" : "faster";
  } else {
    c.verdict = "same";
  }
}

}  // namespace

std::vector<BenchChange> compare_files(const BenchFile& base, const BenchFile& now,
                                       const CompareOptions& options) {
  std::vector<BenchChange> out;
  for (const BenchSeries& b : base.series) {
    BenchChange c;
    c.name = b.name;
    const BenchSeries* n = now.find(b.name);
    if (n == nullptr) {
      c.note = "only in the base";
    } else if (!b.error.empty() || !n->error.empty()) {
      c.note = "failed: " + (n->error.empty() ? b.error : n->error);
    } else if (b.skipped || n->skipped || b.repetitions == 0 || n->repetitions == 0) {
      c.note = "skipped";
    }
    if (!c.note.empty()) {
      out.push_back(c);
      continue;
    }
    c.missing = b.missing + n->missing;
    const bool ratio = b.reports_ratio && n->reports_ratio && !b.ratio.empty() && !n->ratio.empty();
    const std::vector<double>& xs = ratio ? b.ratio : b.time_ns;
    const std::vector<double>& ys = ratio ? n->ratio : n->time_ns;
    c.metric = ratio ? "ratio" : "time";
    if (xs.empty() || ys.empty()) {
      c.note = fmt::format("no finite {} in the {} (read as missing)", c.metric,
                           xs.empty() ? "base" : "new");
      out.push_back(c);
      continue;
    }
    judge(c, xs, ys, options);
    out.push_back(c);
  }
  for (const BenchSeries& n : now.series) {
    if (base.find(n.name) != nullptr) continue;
    BenchChange c;
    c.name = n.name;
    c.note = "only in the new";
    out.push_back(c);
  }
  return out;
}

}  // namespace cplab::perf
