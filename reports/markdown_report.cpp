// summary.md: the sweep at a glance (a property × layout grid per implementation), then every
// failure with its shrunk counterexample and the command that replays it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "reports/sweep_report.hpp"

namespace cplab::reports {

namespace {

using properties::JobResult;
using properties::JobStatus;

std::string cell(const JobResult& r) {
  switch (r.status) {
    case JobStatus::passed:
      return fmt::format("ok {}", r.cases);
    case JobStatus::failed:
      return fmt::format("**FAIL** after {}", r.cases);
    case JobStatus::skipped:
      return "skip";
  }
  return "?";
}

std::string selection(const std::vector<std::string>& names) {
  return names.empty() ? std::string("all") : fmt::format("{}", fmt::join(names, ","));
}

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// Declared combinations drawn per property × layout (all implementations summed), and every one
// a job never drew.
std::string coverage_section(const properties::SweepReport& report) {
  std::int64_t declared = 0, missing = 0;
  std::string missed;
  for (const JobResult& r : report.results) {
    if (r.status == JobStatus::skipped) continue;
    declared += static_cast<std::int64_t>(r.combinations.size());
    missing += r.missing_combinations();
    for (const auto& [name, count] : r.combinations) {
      if (count == 0)
        missed += fmt::format("- {} · {} · {}: {}\n", r.property, r.layout, r.impl, name);
    }
  }
  if (declared == 0) return {};
  std::string md = fmt::format(
      "## Coverage\n\n{} declared combinations (verb option × batch kind × dtype class × C class, "
      "per property and layout) in the jobs run: {} drawn, {} missing\n\n",
      declared, declared - missing, missing);
  if (!missed.empty()) md += "Never drawn:\n\n" + missed + "\n";
  return md;
}

// Where the sweep's time went, slowest property first.
std::string property_times_table(const properties::SweepReport& report) {
  const std::vector<properties::PropertyTime> times = report.property_times();
  if (times.empty()) return "";
  std::string md =
      "## Time per property\n\n| property | jobs | cases | seconds | cases/s | share |\n"
      "|---|---:|---:|---:|---:|---:|\n";
  for (const properties::PropertyTime& t : times) {
    md += fmt::format("| {} | {} | {} | {:.2f} | {:.0f} | {:.1f}% |\n", t.property, t.jobs, t.cases,
                      t.seconds, t.cases_per_second, 100.0 * t.share);
  }
  return md + "\n(seconds summed over the property's jobs, which may have run in parallel)\n\n";
}

}  // namespace

std::string to_markdown(const properties::SweepReport& report) {
  std::string md = "# cplab sweep\n\n";
  std::vector<std::string> shards;
  for (const auto& s : report.shards) shards.push_back(fmt::format("{}/{}", s.index, s.count));
  md += fmt::format(
      "seed {} · {} cases per job · shard {} · layouts {} · cp {} · impls {} · masks {}\n\n"
      "**{}**: {} jobs, {} passed, {} failed, {} skipped; {} cases in {:.1f} s ({:.0f} "
      "cases/s)\n\n",
      report.seed, report.cases_per_job, fmt::join(shards, ","), selection(report.layouts),
      selection(report.cps), selection(report.impls), selection(report.masks),
      report.ok() ? "green" : "RED", report.results.size(), report.count(JobStatus::passed),
      report.count(JobStatus::failed), report.count(JobStatus::skipped), report.total_cases(),
      report.seconds, report.cases_per_second());

  md += property_times_table(report);
  std::vector<std::string> impls, layouts, props;
  for (const JobResult& r : report.results) {
    add_unique(impls, r.impl);
    add_unique(layouts, r.layout);
    add_unique(props, r.property);
  }
  std::map<std::tuple<std::string, std::string, std::string>, const JobResult*> grid;
  for (const JobResult& r : report.results) grid[{r.impl, r.property, r.layout}] = &r;
  for (const std::string& impl : impls) {
    std::string rule;
    for (std::size_t i = 0; i < layouts.size(); ++i) rule += "---|";
    md +=
        fmt::format("## {}\n\n| property | {} |\n|---|{}\n", impl, fmt::join(layouts, " | "), rule);
    for (const std::string& prop : props) {
      md += "| " + prop + " |";
      for (const std::string& layout : layouts) {
        const auto it = grid.find({impl, prop, layout});
        md += " " + (it == grid.end() ? std::string("—") : cell(*it->second)) + " |";
      }
      md += "\n";
    }
    md += "\n";
  }

  md += coverage_section(report);

  std::string failures, skips;
  for (const JobResult& r : report.results) {
    if (r.status == JobStatus::failed) {
      failures += fmt::format(
          "### {} · {} · {}\n\nafter {} cases, {} shrink "
          "steps\n\n```\n{}\n```\n\nreplay:\n\n```sh\n{}\n```\n\n",
          r.property, r.layout, r.impl, r.cases, r.shrinks, r.message, r.replay);
    } else if (r.status == JobStatus::skipped) {
      skips += fmt::format("- {} · {} · {}: {}\n", r.property, r.layout, r.impl, r.message);
    }
  }
  if (!failures.empty()) md += "## Failures\n\n" + failures;
  if (!skips.empty()) md += "## Skipped\n\n" + skips + "\n";
  return md;
}

}  // namespace cplab::reports
