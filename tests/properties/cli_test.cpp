// `cplab sweep`, `cplab replay` and `cplab mutants` end to end: exit statuses, the seed first, the
// replay and rerun lines of a failure, the three report files, sharded sweeps that merge into the
// whole, and a replay string taken from the output that reproduces the failure. The layouts are
// asked of the registry by kind (tests/support/layouts.hpp); a layout's own replayed examples are
// in its file (tests/properties/layouts/ID_test.cpp).
#include "tests/support/cli.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "properties/property.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

using testsupport::CliRun;
using testsupport::fresh_dir;
using testsupport::run_cplab;

nlohmann::json read_report(const std::filesystem::path& dir) {
  std::ifstream in(dir / "report.json");
  return nlohmann::json::parse(in);
}

// The text after `label` up to the end of its line.
std::string line_after(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  if (at == std::string::npos) return {};
  const std::size_t start = at + label.size();
  return text.substr(start, text.find('\n', start) - start);
}

// A layout of packed rows only and one that shards plainly: a job per property each.
std::string two_layouts() {
  const std::string packed_only = testsupport::first_layout(
      "of packed rows only",
      [](const sim::LayoutDescriptor& d) { return !d.cp_off && !d.bshd_rows; });
  return packed_only + "," + testsupport::a_plain_layout();
}

TEST(SweepCli, GreenSweepWritesTheThreeReports) {
  const auto dir = fresh_dir("green");
  const CliRun run = run_cplab("sweep --cases 3 --seed 5 --layouts " + two_layouts() +
                               " --impl sim --out " + dir.string());
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.out.rfind("cplab sweep: seed 5 ", 0), 0u) << run.out;
  const std::size_t jobs = 2 * property_table().size();
  EXPECT_NE(run.out.find(fmt::format("green: {0} jobs, {0} passed", jobs)), std::string::npos)
      << run.out;
  for (const char* file : {"report.json", "junit.xml", "summary.md"})
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  const nlohmann::json report = read_report(dir);
  EXPECT_EQ(report.at("seed"), 5);
  EXPECT_EQ(report.at("results").size(), jobs);
  std::filesystem::remove_all(dir);
}

TEST(SweepCli, FailureExitsOneWithAReplayThatReproducesIt) {
  const auto dir = fresh_dir("red");
  const CliRun run =
      run_cplab("sweep --cases 50 --seed 2 --layouts " + testsupport::a_plain_layout() +
                " --impl pad_labels_zero "
                "--properties token_data_travels_with_its_token --out " +
                dir.string());
  ASSERT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("RED: 1 jobs, 0 passed, 1 failed"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rerun:  cplab sweep --seed 2 --cases 50"), std::string::npos) << run.out;
  const std::string replay = line_after(run.out, "  replay: cplab ");
  ASSERT_FALSE(replay.empty()) << run.out;
  const CliRun again = run_cplab(replay);
  EXPECT_EQ(again.status, 1) << again.out;
  EXPECT_NE(again.out.find("FAIL token_data_travels_with_its_token"), std::string::npos)
      << again.out;
  const std::string on_sim = replay.substr(0, replay.find("--impl")) + "--impl sim" +
                             replay.substr(replay.find(' ', replay.find("--impl") + 7));
  EXPECT_EQ(run_cplab(on_sim).status, 0) << on_sim;
  std::filesystem::remove_all(dir);
}

TEST(SweepCli, ShardedReportsMergeIntoTheWholeSweep) {
  const auto whole = fresh_dir("whole"), a = fresh_dir("shard0"), b = fresh_dir("shard1"),
             merged = fresh_dir("merged");
  // A CP-off layout and one whose map is an assignment balanced over the row's contents.
  const std::string cp_off =
      testsupport::first_layout("CP off", [](const sim::LayoutDescriptor& d) { return d.cp_off; });
  const std::string assigned = testsupport::first_layout(
      "balanced by assignment",
      [](const sim::LayoutDescriptor& d) { return d.map.source == sim::MapSource::assignment; });
  const std::string common =
      "sweep --cases 2 --seed 9 --layouts " + cp_off + "," + assigned + " --impl sim ";
  ASSERT_EQ(run_cplab(common + "--out " + whole.string()).status, 0);
  ASSERT_EQ(run_cplab(common + "--shard 0/2 --out " + a.string()).status, 0);
  ASSERT_EQ(run_cplab(common + "--shard 1/2 --out " + b.string()).status, 0);
  const CliRun merge = run_cplab("sweep --merge " + a.string() + " " +
                                 (b / "report.json").string() + " --out " + merged.string());
  ASSERT_EQ(merge.status, 0) << merge.out << merge.err;
  const nlohmann::json all = read_report(whole), joined = read_report(merged);
  ASSERT_EQ(joined.at("results").size(), all.at("results").size());
  for (std::size_t i = 0; i < all.at("results").size(); ++i) {
    EXPECT_EQ(joined["results"][i]["job"], all["results"][i]["job"]);
    EXPECT_EQ(joined["results"][i]["seed"], all["results"][i]["seed"]);
    EXPECT_EQ(joined["results"][i]["coverage"], all["results"][i]["coverage"]);
  }
  EXPECT_EQ(joined.at("shards").size(), 2u);
  EXPECT_NE(
      run_cplab("sweep --merge " + a.string() + " " + a.string() + " --out " + merged.string())
          .status,
      0);
  for (const auto& dir : {whole, a, b, merged}) std::filesystem::remove_all(dir);
}

TEST(MutantsCli, JsonVerdictsAndTheList) {
  const CliRun run = run_cplab("mutants --json --only thd_unpadded_cu_seqlens,pad_labels_zero");
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("killed"), 2);
  EXPECT_EQ(doc.at("survived"), 0);
  for (const auto& verdict : doc.at("mutants")) {
    EXPECT_TRUE(verdict.at("killed").get<bool>());
    EXPECT_FALSE(verdict.at("counterexample").is_null());
    EXPECT_GT(verdict.at("cases").get<int>(), 0);
    // Time to kill: the killing job's cases to its first failure lie within the job's budget
    // and within the hunt's cases; the seconds add up.
    EXPECT_GE(verdict.at("jobs").get<int>(), 1);
    EXPECT_GE(verdict.at("job_cases").get<int>(), 1);
    EXPECT_LE(verdict.at("job_cases").get<int>(), doc.at("cases_per_job").get<int>());
    EXPECT_LE(verdict.at("job_cases").get<int>(), verdict.at("cases").get<int>());
    EXPECT_GE(verdict.at("shrinks_tried").get<int>(), verdict.at("shrinks").get<int>());
    EXPECT_GE(verdict.at("seconds_to_failure").get<double>(), 0.0);
    EXPECT_GE(verdict.at("shrink_seconds").get<double>(), 0.0);
    EXPECT_LE(
        verdict.at("seconds_to_failure").get<double>() + verdict.at("shrink_seconds").get<double>(),
        verdict.at("seconds").get<double>() + 1e-6);
  }
  EXPECT_EQ(doc["mutants"][0]["property"], "local_documents_match_cu_seqlens");
  const CliRun list = run_cplab("mutants --list");
  EXPECT_EQ(list.status, 0);
  EXPECT_NE(list.out.find("thd_document_major"), std::string::npos);
}

TEST(ReplayCli, BadInputIsOneLineAndExitTwo) {
  const std::string layout = testsupport::a_plain_layout();
  const CliRun bad = run_cplab("replay '" + layout + " cp=2 colour=red'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("unknown case key 'colour'"), std::string::npos) << bad.err;
  EXPECT_EQ(run_cplab("replay --impl nope '" + layout + " cp=2 docs=5'").status, 2);
  const CliRun good = run_cplab("replay '" + layout + " cp=2 docs=5,3,8'");
  EXPECT_EQ(good.status, 0) << good.out;
  EXPECT_NE(good.out.find("rank 0: slots ["), std::string::npos) << good.out;
  EXPECT_NE(good.out.find(fmt::format("{0} of {0} properties hold", property_table().size())),
            std::string::npos)
      << good.out;
}

}  // namespace
}  // namespace cplab::properties
