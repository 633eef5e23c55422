// Where a sweep's time went: each property's cases, summed job seconds, cases per second and share
// of the job time, slowest first, in report.json and summary.md.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "properties/layout_table.hpp"
#include "properties/results.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::properties {
namespace {

JobResult job(const std::string& property, std::int64_t cases, double seconds) {
  static std::int64_t next = 0;
  JobResult r;
  r.job = next++;
  r.property = property;
  r.layout = layout_table_names().front();  // any registered layout; the times are per property
  r.impl = "sim";
  r.status = JobStatus::passed;
  r.cases = cases;
  r.passed = cases;
  r.seconds = seconds;
  return r;
}

SweepReport three_properties() {
  SweepReport report;
  report.shards = {{0, 1}};
  report.seconds = 2.0;
  report.results = {job("fast", 100, 0.5), job("slow", 30, 3.0), job("fast", 100, 0.5),
                    job("idle", 0, 0.0)};
  return report;
}

TEST(PropertyTimes, SlowestFirstWithCasesPerSecondAndShare) {
  const std::vector<PropertyTime> times = three_properties().property_times();
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0].property, "slow");
  EXPECT_EQ(times[0].jobs, 1);
  EXPECT_DOUBLE_EQ(times[0].cases_per_second, 10.0);
  EXPECT_DOUBLE_EQ(times[0].share, 0.75);
  EXPECT_EQ(times[1].property, "fast");
  EXPECT_EQ(times[1].jobs, 2);
  EXPECT_EQ(times[1].cases, 200);
  EXPECT_DOUBLE_EQ(times[1].seconds, 1.0);
  EXPECT_DOUBLE_EQ(times[1].cases_per_second, 200.0);
  EXPECT_DOUBLE_EQ(times[1].share, 0.25);
  EXPECT_EQ(times[2].property, "idle");
  EXPECT_DOUBLE_EQ(times[2].cases_per_second, 0.0);  // no time: no rate, never a division by 0
}

TEST(PropertyTimes, InReportJsonAndSummary) {
  const SweepReport report = three_properties();
  const nlohmann::json doc = nlohmann::json::parse(reports::to_json(report));
  ASSERT_TRUE(doc.contains("by_property"));
  ASSERT_EQ(doc["by_property"].size(), 3u);
  EXPECT_EQ(doc["by_property"][0]["property"], "slow");
  EXPECT_DOUBLE_EQ(doc["by_property"][0]["share"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(doc["by_property"][1]["cases_per_second"].get<double>(), 200.0);
  // The merge reader still reads what the writer wrote.
  EXPECT_EQ(reports::from_json(reports::to_json(report)).results.size(), 4u);
  const std::string md = reports::to_markdown(report);
  const std::size_t table = md.find("## Time per property");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(md.find("| slow | 1 | 30 | 3.00 | 10 | 75.0% |", table), std::string::npos) << md;
  EXPECT_LT(md.find("| slow |", table), md.find("| fast |", table));
}

}  // namespace
}  // namespace cplab::properties
