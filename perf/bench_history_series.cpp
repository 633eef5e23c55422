// The data of `cplab bench history`'s charts, apart from the page that draws them.
#include <fmt/format.h>

#include <algorithm>

#include "perf/bench_history.hpp"
#include "perf/bench_name_index.hpp"

namespace cplab::perf {
namespace {

// The q-quantile of the repetitions, interpolated between order statistics.
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(at);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

std::vector<HistoryPoint> flag_steps(std::vector<HistoryPoint> points, bool higher_is_better,
                                     double threshold_pct) {
  for (std::size_t i = 1; i < points.size(); ++i) {
    const HistoryPoint& before = points[i - 1];
    HistoryPoint& now = points[i];
    if (before.median <= 0.0 || now.median <= 0.0) continue;
    const double worse_pct = higher_is_better ? (1.0 - now.median / before.median) * 100.0
                                              : (now.median / before.median - 1.0) * 100.0;
    const bool outside_band = higher_is_better ? now.median < before.lo : now.median > before.hi;
    now.regression = worse_pct > threshold_pct && outside_band;
  }
  return points;
}

std::vector<HistorySeries> history_series(const std::vector<BenchFile>& runs,
                                          double threshold_pct) {
  std::vector<std::string> names;
  NameIndex seen;
  for (const BenchFile& run : runs) {
    for (const BenchSeries& s : run.series) {
      if (seen.insert(s.name, names.size()) == names.size()) names.push_back(s.name);
    }
  }
  std::vector<HistorySeries> out;
  for (const std::string& name : names) {
    HistorySeries series;
    series.name = name;
    for (const BenchFile& run : runs) {
      const BenchSeries* s = run.find(name);
      if (s != nullptr && s->repetitions > 0 && (!s->reports_ratio || s->ratio.empty()))
        series.ratio = false;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const BenchSeries* s = runs[i].find(name);
      if (s == nullptr || s->repetitions == 0) continue;
      std::vector<double> values = series.ratio ? s->ratio : s->time_ns;
      if (values.empty()) continue;  // every value missing
      if (!series.ratio) {
        for (double& v : values) v /= 1e6;  // ms
      }
      const nlohmann::json cplab = runs[i].context.value("cplab", nlohmann::json::object());
      const std::string commit = cplab.value("commit", "unknown").substr(0, 8);
      HistoryPoint point;
      point.run = fmt::format("{} · {}", i + 1, commit);
      point.median = median(values);
      point.lo = quantile(values, 0.25);
      point.hi = quantile(values, 0.75);
      series.points.push_back(point);
    }
    if (series.points.empty()) continue;
    series.points = flag_steps(std::move(series.points), series.ratio, threshold_pct);
    out.push_back(std::move(series));
  }
  return out;
}

}  // namespace cplab::perf
