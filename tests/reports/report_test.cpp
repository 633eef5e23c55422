// The sweep report: report.json follows reports/README.md's schema field by field and reads back
// to the same report; shard reports merge into the full one (and refuse to mix sweeps); junit.xml
// counts failures and skips and escapes what it quotes; summary.md carries the replay commands.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::reports {
namespace {

using properties::JobResult;
using properties::JobStatus;
using properties::SweepReport;

// Two registered layouts' names, read from the registry, as the report's data (the expectations
// below build the text they make from the same names): x takes packed rows at C = 2 (the failure's
// counterexample, a row of x, is drawn in the HTML page), y is another.
std::string layout_x() { return testsupport::a_plain_layout(); }
std::string layout_y() {
  return testsupport::first_layout(
      "another layout", [](const sim::LayoutDescriptor& d) { return d.name != layout_x(); });
}
// The failure's counterexample, its message and its replay, all of a row of x.
std::string counterexample() { return layout_x() + " cp=2 docs=5"; }
std::string replay() { return "cplab replay --impl sim --property p '" + counterexample() + "'"; }

JobResult result(std::int64_t job, const std::string& property, const std::string& layout,
                 JobStatus status) {
  JobResult r;
  r.job = job;
  r.property = property;
  r.layout = layout;
  r.impl = "sim";
  r.status = status;
  r.cases = status == JobStatus::skipped ? 0 : 10;
  r.passed = status == JobStatus::passed ? 10 : status == JobStatus::failed ? 9 : 0;
  r.failed = status == JobStatus::failed ? 1 : 0;
  r.seed = 18446744073709551557ull;  // above 2^53: must survive as an unsigned 64-bit integer
  r.seconds = 0.25;
  r.coverage = {{layout_x() + " cp=odd packed", 6}, {layout_x() + " cp=pow2 packed", 4}};
  if (status != JobStatus::skipped)
    r.combinations = {{"THD · packed · C=2", 3}, {"N=0 · packed", 0}};
  if (status == JobStatus::failed) {
    r.shrinks = 5;
    r.counterexample = counterexample();
    r.message = layout_x() + " cp=2 dtype=f32 docs=5: rank 1 <wrong> & \"quoted\"";
    r.replay = replay();
  }
  if (status == JobStatus::skipped) r.message = "no CUDA device";
  return r;
}

SweepReport sample_report(std::int64_t index, std::int64_t count) {
  SweepReport report;
  report.seed = 42;
  report.cases_per_job = 10;
  report.shards = {{index, count}};
  report.impls = {"sim", "gpu"};
  report.masks = {"window:128", "chunked"};
  report.seconds = 2.0;
  const std::string x = layout_x();
  const std::string y = layout_y();
  const std::vector<JobResult> all = {
      result(0, "a", x, JobStatus::passed), result(1, "a", y, JobStatus::failed),
      result(2, "b", x, JobStatus::skipped), result(3, "b", y, JobStatus::passed)};
  for (const JobResult& r : all) {
    if (r.job % count == index) report.results.push_back(r);
  }
  return report;
}

TEST(SweepReportJson, FollowsTheDocumentedSchema) {
  const std::string text = to_json(sample_report(0, 1));
  EXPECT_EQ(text.find("\"schema\""), text.find('"'));  // the first key, as documented
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("schema"), kSweepSchema);
  for (const char* key : {"seed", "cases_per_job", "shards", "selection", "time_budget_seconds",
                          "seconds", "cases", "cases_per_second", "totals", "results"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc.at("cases"), 30);
  EXPECT_DOUBLE_EQ(doc.at("cases_per_second").get<double>(), 15.0);
  EXPECT_EQ(doc.at("totals"),
            (nlohmann::json{{"jobs", 4}, {"passed", 2}, {"failed", 1}, {"skipped", 1}}));
  EXPECT_EQ(doc.at("selection").at("impls"), (nlohmann::json{"sim", "gpu"}));
  EXPECT_EQ(doc.at("selection").at("masks"), (nlohmann::json{"window:128", "chunked"}));
  EXPECT_EQ(doc.at("shards"), (nlohmann::json::array({{{"index", 0}, {"count", 1}}})));
  const nlohmann::json& failed = doc.at("results").at(1);
  for (const char* key :
       {"job", "property", "layout", "impl", "status", "cases", "passed", "failed", "shrinks",
        "seed", "seconds", "counterexample", "message", "replay", "coverage"}) {
    EXPECT_TRUE(failed.contains(key)) << key;
  }
  EXPECT_EQ(failed.at("status"), "failed");
  EXPECT_EQ(failed.at("seed").get<std::uint64_t>(), 18446744073709551557ull);
  EXPECT_EQ(failed.at("replay"), replay());
  EXPECT_TRUE(doc.at("results").at(0).at("counterexample").is_null());
  EXPECT_EQ(doc.at("results").at(2).at("message"), "no CUDA device");
}

TEST(SweepReportJson, ReadsBackWhatItWrote) {
  const SweepReport report = sample_report(0, 1);
  const SweepReport back = from_json(to_json(report));
  EXPECT_EQ(to_json(back), to_json(report));
  EXPECT_EQ(back.results.at(1).message, report.results.at(1).message);
  EXPECT_EQ(back.masks, report.masks);
  // A report written before --masks existed drew every family.
  nlohmann::json old = nlohmann::json::parse(to_json(report));
  old["selection"].erase("masks");
  EXPECT_TRUE(from_json(old.dump()).masks.empty());
  EXPECT_THROW(from_json("{\"schema\": \"cplab-sweep-report/0\"}"), Error);
  EXPECT_THROW(from_json("not json"), Error);
  nlohmann::json broken = nlohmann::json::parse(to_json(report));
  broken["results"][0].erase("status");
  try {
    from_json(broken.dump());
    ADD_FAILURE() << "a result without status was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("results[0] has no 'status'"), std::string::npos)
        << e.what();
  }
}

TEST(SweepReportJson, CountsDeclaredCombinationsAndReadsReportsWithout) {
  const SweepReport report = sample_report(0, 1);
  const nlohmann::json doc = nlohmann::json::parse(to_json(report));
  // Three jobs ran, each declaring two combinations of which one was never drawn.
  EXPECT_EQ(doc.at("combinations"),
            (nlohmann::json{{"declared", 6}, {"drawn", 3}, {"missing", 3}}));
  const nlohmann::json& first = doc.at("results").at(0);
  EXPECT_EQ(first.at("combinations").at("THD · packed · C=2"), 3);
  EXPECT_EQ(first.at("missing_combinations"), 1);
  EXPECT_NE(to_markdown(report).find("6 declared combinations"), std::string::npos);
  EXPECT_NE(to_markdown(report).find("a · " + layout_x() + " · sim: N=0 · packed"),
            std::string::npos);
  // A report written before combinations existed reads back with none.
  nlohmann::json old = doc;
  for (auto& r : old["results"]) {
    r.erase("combinations");
    r.erase("missing_combinations");
  }
  old.erase("combinations");
  EXPECT_TRUE(from_json(old.dump()).results.at(0).combinations.empty());
}

TEST(SweepReportMerge, ShardsMergeIntoTheFullReport) {
  const SweepReport full = sample_report(0, 1);
  const SweepReport merged = merge({sample_report(1, 3), sample_report(0, 3), sample_report(2, 3)});
  ASSERT_EQ(merged.results.size(), full.results.size());
  for (std::size_t i = 0; i < full.results.size(); ++i) {
    EXPECT_EQ(merged.results[i].job, full.results[i].job);
    EXPECT_EQ(merged.results[i].status, full.results[i].status);
  }
  EXPECT_EQ(merged.shards.size(), 3u);
  EXPECT_EQ(merged.shards.front().index, 0);
  EXPECT_DOUBLE_EQ(merged.seconds, 6.0);
  EXPECT_FALSE(merged.ok());
  // Through files, as `cplab sweep --merge` reads them.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cplab_merge_test";
  std::filesystem::remove_all(dir);
  write_all(sample_report(0, 2), dir / "a");
  write_all(sample_report(1, 2), dir / "b");
  const SweepReport from_files =
      merge({read_json_file(dir / "a" / "report.json"), read_json_file(dir / "b" / "report.json")});
  EXPECT_EQ(from_files.results.size(), full.results.size());
  std::filesystem::remove_all(dir);
}

TEST(SweepReportMerge, RefusesToMixSweepsOrRepeatAShard) {
  SweepReport other = sample_report(1, 2);
  other.seed = 43;
  EXPECT_THROW(merge({sample_report(0, 2), other}), Error);
  SweepReport other_masks = sample_report(1, 2);
  other_masks.masks = {"causal"};
  EXPECT_THROW(merge({sample_report(0, 2), other_masks}), Error);
  EXPECT_THROW(merge({sample_report(0, 2), sample_report(0, 2)}), Error);
  EXPECT_THROW(merge({sample_report(0, 2), sample_report(1, 3)}), Error);
  EXPECT_THROW(merge({}), Error);
}

TEST(JunitXml, CountsFailuresAndSkipsAndEscapes) {
  const std::string xml = to_junit(sample_report(0, 1));
  EXPECT_NE(
      xml.find("<testsuites name=\"cplab sweep seed=42\" tests=\"4\" failures=\"1\" skipped=\"1\""),
      std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"a\" tests=\"2\" failures=\"1\" skipped=\"0\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"cplab.a\" name=\"" + layout_y() + "/sim\""),
            std::string::npos);
  EXPECT_NE(xml.find("&lt;wrong&gt; &amp; &quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(xml.find("<wrong>"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"no CUDA device\"/>"), std::string::npos);
}

TEST(MarkdownSummary, ShowsTheGridAndEveryFailureWithItsReplay) {
  const std::string md = to_markdown(sample_report(0, 1));
  EXPECT_NE(md.find("**RED**"), std::string::npos);
  EXPECT_NE(md.find("| property | " + layout_x() + " | " + layout_y() +
                    " |\n|---|---|---|\n| a | ok 10 | **FAIL** after 10 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(replay()), std::string::npos);
  EXPECT_NE(md.find("- b · " + layout_x() + " · sim: no CUDA device"), std::string::npos);
}

}  // namespace
}  // namespace cplab::reports

namespace cplab::reports {
namespace {

// Numbers of the wrong kind are refused before any conversion (a float seed was converted with a
// plain cast, undefined out of range; found by fuzz_merge and kept in fuzz/regressions/merge/).
TEST(SweepReportJson, RefusesNumbersOfTheWrongKind) {
  SweepReport report;
  report.seed = 1;
  report.cases_per_job = 1;
  report.shards = {{0, 1}};
  nlohmann::json doc = nlohmann::json::parse(to_json(report));
  EXPECT_NO_THROW(from_json(doc.dump()));
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"seed", 8.84467e19},
           {"seed", -1},
           {"cases_per_job", 1.5},
           {"cases_per_job", 18446744073709551615ull},
           {"complete", "yes"},
           {"shards", nlohmann::json::array()}}) {
    nlohmann::json bad = doc;
    bad[key] = value;
    EXPECT_THROW(from_json(bad.dump()), Error) << key << " = " << value;
  }
}

}  // namespace
}  // namespace cplab::reports
