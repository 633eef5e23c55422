// index.html: the sweep as one self-contained page (no scripts, fonts or links outside it, so it
// opens offline and from a CI artifact): totals and throughput, the environment, a property ×
// layout matrix per implementation, every failure with its shrunk counterexample drawn as
// `cplab explain` draws a row, its replay command, and the skipped jobs with their reasons.
// Written as XHTML, so XML tools read it too.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/markup_text.hpp"
#include "core/token_moves.hpp"
#include "properties/case.hpp"
#include "properties/case_data.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "reports/layout_explain.hpp"
#include "reports/sweep_environment.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {
namespace {

using properties::JobResult;
using properties::JobStatus;

std::string esc(const std::string& text) { return escape_markup(text, LineBreaks::keep); }

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

std::string failure_id(const JobResult& r) { return fmt::format("failure-{}", r.job); }

std::string matrix_cell(const JobResult& r) {
  switch (r.status) {
    case JobStatus::passed:
      return fmt::format(R"(<td class="pass" title="{} cases">ok {}</td>)", r.cases, r.cases);
    case JobStatus::failed:
      return fmt::format(R"(<td class="fail"><a href="#{}">FAIL</a> after {}</td>)", failure_id(r),
                         r.cases);
    case JobStatus::skipped:
      return fmt::format(R"(<td class="skip" title="{}">skipped</td>)", esc(r.message));
  }
  return "<td>?</td>";
}

std::string matrices(const properties::SweepReport& report) {
  std::vector<std::string> impls, layouts, props;
  for (const JobResult& r : report.results) {
    add_unique(impls, r.impl);
    add_unique(layouts, r.layout);
    add_unique(props, r.property);
  }
  std::map<std::tuple<std::string, std::string, std::string>, const JobResult*> grid;
  for (const JobResult& r : report.results) grid[{r.impl, r.property, r.layout}] = &r;
  std::string out;
  for (const std::string& impl : impls) {
    out += fmt::format(
        "<h3>implementation {}</h3>\n<table class=\"matrix\"><tr>"
        "<th class=\"name\">property</th>",
        esc(impl));
    for (const std::string& layout : layouts) out += "<th>" + esc(layout) + "</th>";
    out += "</tr>\n";
    for (const std::string& prop : props) {
      out += "<tr><td class=\"name\">" + esc(prop) + "</td>";
      for (const std::string& layout : layouts) {
        const auto it = grid.find({impl, prop, layout});
        out += it == grid.end() ? std::string("<td class=\"skip\">not run</td>")
                                : matrix_cell(*it->second);
      }
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

// The counterexample's first row under its layout, drawn as explain draws it.
std::string counterexample_picture(const JobResult& r) {
  try {
    const properties::Case c = properties::parse_case(r.counterexample);
    const Batch batch = properties::make_batch(c);
    const ShardPlan plan = reference::plan(c.spec, batch);
    const ShardPlan first = reference::microbatch_plan(plan, 0);
    const RowPlan& row = first.rows.at(0);
    std::vector<std::int64_t> labels;
    if (batch.has(keys::labels)) {
      const Batch rows = slice_token_rows(batch, 0, plan.rows_per_microbatch());
      const TokenField& field = rows.tokens.at(keys::labels);
      const Tensor global = reference::pad_to_global(first, field);
      for (std::int64_t g = 0; g < row.padded_len; ++g)
        labels.push_back(static_cast<std::int64_t>(global.get(g)));
    }
    const LayoutStory story = tell_layout(c.spec, row, labels, verb_bytes(c.spec, row));
    return explain_html_fragment({story}, properties::case_headline(c) + " · row 0",
                                 fmt::format("j{}_", r.job));
  } catch (const Error& e) {
    return fmt::format("<p class=\"err\">the counterexample cannot be drawn: {}</p>\n",
                       esc(e.what()));
  }
}

std::string failures(const properties::SweepReport& report) {
  std::string out;
  for (const JobResult& r : report.results) {
    if (r.status != JobStatus::failed) continue;
    out += fmt::format(
        "<section class=\"failure\" id=\"{}\"><h3>FAILED {} · {} · {}</h3>\n"
        "<p>after {} cases ({} shrinks), job seed {}</p>\n<pre>{}</pre>\n"
        "<p>counterexample:</p><pre>{}</pre>\n<p>replay:</p><pre>{}</pre>\n",
        failure_id(r), esc(r.property), esc(r.layout), esc(r.impl), r.cases, r.shrinks, r.seed,
        esc(r.message), esc(r.counterexample), esc(r.replay));
    out += counterexample_picture(r) + "</section>\n";
  }
  return out.empty() ? "<p>none</p>\n" : out;
}

std::string skipped(const properties::SweepReport& report) {
  std::map<std::string, std::int64_t> reasons;  // one line per reason, not per job
  for (const JobResult& r : report.results) {
    if (r.status == JobStatus::skipped) ++reasons[r.impl + ": " + r.message];
  }
  if (reasons.empty()) return "<p>none</p>\n";
  std::string out = "<ul>\n";
  for (const auto& [reason, jobs] : reasons)
    out += fmt::format("<li>{} ({} job{})</li>\n", esc(reason), jobs, jobs == 1 ? "" : "s");
  return out + "</ul>\n";
}

std::string selection(const std::vector<std::string>& names) {
  return names.empty() ? std::string("all") : fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

std::string to_html(const properties::SweepReport& report) {
  const Environment env = sweep_environment();
  std::vector<std::string> shards;
  for (const auto& s : report.shards) shards.push_back(fmt::format("{}/{}", s.index, s.count));
  const std::string verdict = report.ok() ? "green" : "RED";
  std::string body = fmt::format(
      "<h1>cplab sweep: <span class=\"{}\">{}</span></h1>\n"
      "<p>seed {} · {} cases per job · shard {} · layouts {} · cp {} · impls {} · properties "
      "{} · masks {}</p>\n"
      "<p class=\"totals\">{} jobs: {} passed, {} failed, {} skipped · throughput: {} cases in "
      "{:.1f} s ({:.1f} cases/s)</p>\n",
      report.ok() ? "pass" : "fail", verdict, report.seed, report.cases_per_job,
      fmt::join(shards, ","), esc(selection(report.layouts)), esc(selection(report.cps)),
      esc(selection(report.impls)), esc(selection(report.properties)), esc(selection(report.masks)),
      report.results.size(), report.count(JobStatus::passed), report.count(JobStatus::failed),
      report.count(JobStatus::skipped), report.total_cases(), report.seconds,
      report.cases_per_second());
  body += fmt::format(
      "<h2>Environment</h2>\n<table class=\"env\"><tr><td class=\"name\">commit</td>"
      "<td class=\"name\">{}</td></tr><tr><td class=\"name\">compiler</td><td class=\"name\">{}"
      "</td></tr><tr><td class=\"name\">CUDA</td><td class=\"name\">{}</td></tr><tr><td "
      "class=\"name\">GPU</td><td class=\"name\">{}</td></tr></table>\n",
      esc(env.commit), esc(env.compiler), esc(env.cuda), esc(env.gpu));
  body += "<h2>Property × layout × implementation</h2>\n" + matrices(report);
  body += "<h2>Failures</h2>\n" + failures(report);
  body += "<h2>Skipped</h2>\n" + skipped(report);
  return fmt::format(
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
      "<meta charset=\"utf-8\"/><title>cplab sweep · {}</title><style>{}</style></head>\n"
      "<body>\n{}</body></html>\n",
      verdict, page_style(), body);
}

}  // namespace cplab::reports
