#include "perf/bench_history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/markup_text.hpp"
#include "core/output_file.hpp"
#include "core/untrusted_text.hpp"
#include "perf/bench_results.hpp"

namespace cplab::perf {
namespace {

namespace fs = std::filesystem;

// The charting libraries: CPLAB_CHARTS_BUNDLE, else the bundle this build made.
std::string charts_bundle() {
  const char* env = std::getenv("CPLAB_CHARTS_BUNDLE");
  const fs::path path = env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CPLAB_CHARTS_JS);
  CPLAB_CHECK(fs::exists(path),
              "bench history: the charting bundle {} is missing (run scripts/setup, which runs "
              "npm ci in bench/history, then rebuild)",
              path.string());
  return read_text_file(path.string());
}

// JSON that may sit inside a <script> element.
std::string script_safe(const nlohmann::json& value) {
  std::string text = value.dump();
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2))
    text.replace(at, 2, "<\\/");
  return text;
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

}  // namespace

int run_bench_history(const BenchHistoryArgs& args) {
  CPLAB_CHECK(!args.files.empty(), "bench history: no result files given");
  std::vector<BenchFile> runs;
  for (const std::string& path : args.files) runs.push_back(read_bench_file(path));
  std::stable_sort(runs.begin(), runs.end(), [](const BenchFile& a, const BenchFile& b) {
    return a.context.value("date", "") < b.context.value("date", "");
  });
  const std::string bundle = charts_bundle();
  // Values that are not finite numbers are left out of the charts, and the page says so.
  std::string missing_notes;
  for (const BenchFile& run : runs) {
    const std::string note = describe_missing(run);
    if (note.empty()) continue;
    fmt::print("note: {}\n", escape_untrusted(note));
    missing_notes +=
        fmt::format("<li class=\"missing\">{}</li>\n", escape_markup(escape_untrusted(note)));
  }
  nlohmann::json specs = nlohmann::json::array();
  std::string flagged;
  std::size_t regressions = 0;
  for (const HistorySeries& series : history_series(runs, args.threshold_pct)) {
    for (const HistoryPoint& p : series.points) {
      if (!p.regression) continue;
      ++regressions;
      flagged += fmt::format("<li class=\"regression\">{} at run {}</li>\n",
                             escape_markup(series.name), escape_markup(p.run));
    }
    specs.push_back(chart_spec(series.name,
                               series.ratio ? "ratio_to_baseline (higher is better)"
                                            : "ms per iteration (lower is better)",
                               series.points));
  }
  fs::create_directories(args.out);
  const fs::path page = fs::path(args.out) / "index.html";
  write_output_file(page.string(), [&](std::ostream& out) {
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
  });
  fmt::print("bench history: {} charts over {} runs, {} regressions flagged → {}\n", specs.size(),
             runs.size(), regressions, page.string());
  return 0;
}

}  // namespace cplab::perf
