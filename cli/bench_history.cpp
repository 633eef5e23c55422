#include "cli/bench_history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/bench_name_index.hpp"
#include "cli/bench_results.hpp"
#include "cli/errors.hpp"
#include "reference/types/error.hpp"

namespace cplab::cli {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The charting libraries: CPLAB_CHARTS_BUNDLE, else the bundle this build made.
std::string charts_bundle() {
  const char* env = std::getenv("CPLAB_CHARTS_BUNDLE");
  const fs::path path = env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CPLAB_CHARTS_JS);
  CPLAB_CHECK(fs::exists(path),
              "bench history: the charting bundle {} is missing (run scripts/setup, which runs "
              "npm ci in bench/history, then rebuild)",
              path.string());
  return read_text(path);
}

// JSON that may sit inside a <script> element.
std::string script_safe(const nlohmann::json& value) {
  std::string text = value.dump();
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2))
    text.replace(at, 2, "<\\/");
  return text;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

nlohmann::json chart_spec(const std::string& name, const std::string& metric,
                          const std::vector<HistoryPoint>& points) {
  nlohmann::json values = nlohmann::json::array();
  for (const HistoryPoint& p : points) {
    values.push_back({{"run", p.run},
                      {"median", p.median},
                      {"lo", p.lo},
                      {"hi", p.hi},
                      {"regression", p.regression}});
  }
  const nlohmann::json x = {
      {"field", "run"}, {"type", "ordinal"}, {"sort", nullptr}, {"title", "run · commit"}};
  return {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"title", name},
      {"width", 640},
      {"height", 160},
      {"data", {{"values", values}}},
      {"layer",
       {{{"mark", {{"type", "area"}, {"opacity", 0.25}, {"color", "#4c78a8"}}},
         {"encoding",
          {{"x", x},
           {"y", {{"field", "lo"}, {"type", "quantitative"}, {"title", metric}}},
           {"y2", {{"field", "hi"}}}}}},
        {{"mark", {{"type", "line"}, {"point", true}, {"color", "#4c78a8"}}},
         {"encoding",
          {{"x", x},
           {"y", {{"field", "median"}, {"type", "quantitative"}}},
           {"tooltip",
            {{{"field", "run"}}, {{"field", "median"}}, {{"field", "lo"}}, {{"field", "hi"}}}}}}},
        {{"transform", {{{"filter", "datum.regression"}}}},
         {"mark",
          {{"type", "point"},
           {"shape", "triangle-down"},
           {"size", 220},
           {"filled", true},
           {"color", "#d62728"}}},
         {"encoding", {{"x", x}, {"y", {{"field", "median"}, {"type", "quantitative"}}}}}}}}};
}

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

int run_bench_history(const BenchHistoryArgs& args) {
  CPLAB_CHECK(!args.files.empty(), "bench history: no result files given");
  std::vector<BenchFile> runs;
  for (const std::string& path : args.files) runs.push_back(read_bench_file(path));
  std::stable_sort(runs.begin(), runs.end(), [](const BenchFile& a, const BenchFile& b) {
    return a.context.value("date", "") < b.context.value("date", "");
  });
  const std::string bundle = charts_bundle();
  // Every benchmark in the order it first appears.
  std::vector<std::string> names;
  NameIndex seen;
  for (const BenchFile& run : runs) {
    for (const BenchSeries& s : run.series) {
      if (seen.insert(s.name, names.size()) == names.size()) names.push_back(s.name);
    }
  }
  // Values that are not finite numbers are left out of the charts, and the page says so.
  std::string missing_notes;
  for (const BenchFile& run : runs) {
    const std::string note = describe_missing(run);
    if (note.empty()) continue;
    fmt::print("note: {}\n", escape_untrusted(note));
    missing_notes +=
        fmt::format("<li class=\"missing\">{}</li>\n", html_escape(escape_untrusted(note)));
  }
  nlohmann::json specs = nlohmann::json::array();
  std::string flagged;
  std::size_t regressions = 0;
  for (const std::string& name : names) {
    bool ratio = true;
    for (const BenchFile& run : runs) {
      const BenchSeries* s = run.find(name);
      if (s != nullptr && s->repetitions > 0 && (!s->reports_ratio || s->ratio.empty()))
        ratio = false;
    }
    std::vector<HistoryPoint> points;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const BenchSeries* s = runs[i].find(name);
      if (s == nullptr || s->repetitions == 0) continue;
      std::vector<double> values = ratio ? s->ratio : s->time_ns;
      if (values.empty()) continue;  // every value missing
      if (!ratio) {
        for (double& v : values) v /= 1e6;  // ms
      }
      const nlohmann::json cplab = runs[i].context.value("cplab", nlohmann::json::object());
      const std::string commit = cplab.value("commit", "unknown").substr(0, 8);
      HistoryPoint point;
      point.run = fmt::format("{} · {}", i + 1, commit);
      point.median = median(values);
      point.lo = quantile(values, 0.25);
      point.hi = quantile(values, 0.75);
      points.push_back(point);
    }
    if (points.empty()) continue;
    points = flag_steps(std::move(points), ratio, args.threshold_pct);
    for (const HistoryPoint& p : points) {
      if (!p.regression) continue;
      ++regressions;
      flagged += fmt::format("<li class=\"regression\">{} at run {}</li>\n", html_escape(name),
                             html_escape(p.run));
    }
    specs.push_back(chart_spec(
        name, ratio ? "ratio_to_baseline (higher is better)" : "ms per iteration (lower is better)",
        points));
  }
  fs::create_directories(args.out);
  const fs::path page = fs::path(args.out) / "index.html";
  const fs::path tmp = page.string() + ".tmp";
  {
    std::ofstream out(tmp);
    CPLAB_CHECK(out.good(), "bench history: cannot write {}", page.string());
    out << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>cplab benchmark "
           "history</title>\n<style>body{font-family:sans-serif;margin:1em}"
           ".chart{margin:1em 0}.regression{color:#d62728}</style>\n<script>"
        << bundle << "</script>\n</head><body>\n<h1>cplab benchmark history</h1>\n"
        << fmt::format(
               "<p>{} runs, {} benchmarks; step rule: worse than the previous run by more "
               "than {}% and outside its noise band (the interquartile range of its "
               "repetitions).</p>\n",
               runs.size(), specs.size(), args.threshold_pct)
        << fmt::format("<h2>Regressions ({})</h2>\n<ul id=\"regressions\">\n{}</ul>\n", regressions,
                       flagged)
        << (missing_notes.empty()
                ? ""
                : fmt::format("<h2>Missing values</h2>\n<ul id=\"missing\">\n{}</ul>\n",
                              missing_notes))
        << "<div id=\"charts\"></div>\n<script type=\"application/json\" id=\"specs\">"
        << script_safe(specs) << "</script>\n<script>\n"
        << R"(const specs = JSON.parse(document.getElementById('specs').textContent);
const root = document.getElementById('charts');
Promise.all(specs.map((spec) => {
  const div = document.createElement('div');
  div.className = 'chart';
  root.appendChild(div);
  return vegaEmbed(div, spec, {renderer: 'svg', actions: false});
})).then(() => { document.body.dataset.charts = String(specs.length); },
         (e) => { document.body.dataset.chartError = String(e); });
</script>
</body></html>
)";
    CPLAB_CHECK(out.good(), "bench history: cannot write {}", page.string());
  }
  fs::rename(tmp, page);
  fmt::print("bench history: {} charts over {} runs, {} regressions flagged → {}\n", specs.size(),
             runs.size(), regressions, page.string());
  return 0;
}

}  // namespace cplab::cli
