// junit.xml: one testsuite per property, one testcase per layout × implementation, so CI
// dashboards show which invariant broke where. Skipped jobs are <skipped>, never passes.
#include <fmt/format.h>

#include <map>

#include "reports/sweep_report.hpp"

namespace cplab::reports {

namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even escaped; keep newlines and tabs.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t') out += ch;
    }
  }
  return out;
}

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
    suite.body +=
        fmt::format("    <testcase classname=\"cplab.{}\" name=\"{}/{}\" time=\"{:.3f}\"",
                    xml_escape(r.property), xml_escape(r.layout), xml_escape(r.impl), r.seconds);
    if (r.status == JobStatus::passed) {
      suite.body += "/>\n";
      continue;
    }
    suite.body += ">\n";
    if (r.status == JobStatus::failed) {
      suite.failures += 1;
      suite.body += fmt::format(
          "      <failure message=\"{}\">counterexample: {}\nreplay: {}\n{}</failure>\n",
          xml_escape(r.message.substr(0, r.message.find('\n'))), xml_escape(r.counterexample),
          xml_escape(r.replay), xml_escape(r.message));
    } else {
      suite.skipped += 1;
      suite.body += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(r.message));
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
        xml_escape(name), suite.tests, suite.failures, suite.skipped, suite.seconds);
    xml += suite.body;
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

}  // namespace cplab::reports
