// junit.xml: one testsuite per property, one testcase per layout × implementation, so CI
// dashboards show which invariant broke where. Skipped jobs are <skipped>, never passes.
#include <fmt/format.h>

#include <map>

#include "core/markup_text.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {

namespace {

struct SuiteTotals {
  std::int64_t tests = 0, failures = 0, skipped = 0;
  double seconds = 0.0;
  std::string body;
};

}  // namespace

std::string to_junit(const properties::SweepReport& report) {
  using properties::JobStatus;
  std::map<std::string, SuiteTotals> suites;
  std::vector<std::string> order;  // suites in the order their first job ran
  for (const properties::JobResult& r : report.results) {
    if (!suites.count(r.property)) order.push_back(r.property);
    SuiteTotals& suite = suites[r.property];
    suite.tests += 1;
    suite.seconds += r.seconds;
    suite.body += fmt::format("    <testcase classname=\"cplab.{}\" name=\"{}/{}\" time=\"{:.3f}\"",
                              escape_markup(r.property), escape_markup(r.layout),
                              escape_markup(r.impl), r.seconds);
    if (r.status == JobStatus::passed) {
      suite.body += "/>\n";
      continue;
    }
    suite.body += ">\n";
    if (r.status == JobStatus::failed) {
      suite.failures += 1;
      suite.body += fmt::format(
          "      <failure message=\"{}\">counterexample: {}\nreplay: {}\n{}</failure>\n",
          escape_markup(r.message.substr(0, r.message.find('\n'))), escape_markup(r.counterexample),
          escape_markup(r.replay), escape_markup(r.message, LineBreaks::keep));
    } else {
      suite.skipped += 1;
      suite.body += fmt::format("      <skipped message=\"{}\"/>\n", escape_markup(r.message));
    }
    suite.body += "    </testcase>\n";
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format(
      "<testsuites name=\"cplab sweep seed={}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n",
      report.seed, report.results.size(), report.count(JobStatus::failed),
      report.count(JobStatus::skipped), report.seconds);
  for (const std::string& name : order) {
    const SuiteTotals& suite = suites[name];
    xml += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
        escape_markup(name), suite.tests, suite.failures, suite.skipped, suite.seconds);
    xml += suite.body;
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

}  // namespace cplab::reports
