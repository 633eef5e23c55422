// `cplab schedule` end to end: the JSON contract (global slot ranges, masks, work, bytes, the
// critical path), `--algo all` with its refused algorithms, the picture and the page, and bad
// input as one line with exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

nlohmann::json schedule_json(const std::string& args) {
  const auto run = run_cplab("schedule " + args + " --json");
  EXPECT_EQ(run.status, 0) << args << ": " << run.err;
  return nlohmann::json::parse(run.out);
}

TEST(CliSchedule, StripeMergesNoSlotsAndReadsDocCausalOnPads) {
  const nlohmann::json j = schedule_json("--layout stripe --cp 2 --seq-len 7 --algo ring");
  const nlohmann::json& rank1 = j["steps"][0]["ranks"][1];
  EXPECT_EQ(rank1["blocks"][0]["mask"], "doc-causal");
  EXPECT_EQ(rank1["blocks"][0]["q"], nlohmann::json::parse("[[1,2],[3,4],[5,6],[7,8]]"));
}

TEST(CliSchedule, AllComparesAndListsRefusals) {
  const auto run = run_cplab("schedule --layout head-tail --cp 4 --seq-len 64 --algo all");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("all-gather"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ulysses"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("usp         refused: head-tail refuses usp"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("critical path"), std::string::npos);
  const nlohmann::json j = schedule_json(
      "--layout magi --cp 2 --chunk-size 4 --doc-lens 9,7 "
      "--algo all");
  ASSERT_EQ(j["algos"].size(), 4u);
  EXPECT_EQ(j["algos"][0]["algo"], "all-gather");
  EXPECT_TRUE(j["algos"][0].contains("critical_path"));
  EXPECT_EQ(j["algos"][1]["algo"], "ring");
  EXPECT_NE(j["algos"][1]["refused"].get<std::string>().find("MagiAttention"), std::string::npos);
  // Ulysses: every rank computes every pair on its heads.
  const nlohmann::json& ulysses = j["algos"][2];
  EXPECT_EQ(ulysses["critical_path"].get<double>() * 2, ulysses["total_work"].get<double>());
}

TEST(CliSchedule, UspRingsOverItsGroups) {
  const nlohmann::json j =
      schedule_json("--layout usp --cp 4 --ring-degree 2 --seq-len 32 --algo usp --heads 4");
  EXPECT_EQ(j["ring_degree"], 2);
  EXPECT_EQ(j["ulysses_degree"], 2);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][0]["exchange"], "all_to_all");
  EXPECT_EQ(j["steps"][1]["exchange"], "send_recv");
  EXPECT_EQ(j["critical_path"].get<double>(), j["ideal"].get<double>());
}

TEST(CliSchedule, DrawsThePictureAndThePage) {
  ScratchDir dir;
  const auto run = run_cplab("schedule --layout thd --cp 2 --doc-lens 5,3,8 --algo all --svg " +
                             dir.file("s.svg"));
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string svg = slurp(dir.file("s.svg"));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("data-step=\"1\" data-rank=\"1\""), std::string::npos);
  const auto page = run_cplab(
      "schedule --layout thd --cp 2 --doc-lens 5,3,8 --algo ring "
      "--format html");
  ASSERT_EQ(page.status, 0) << page.err;
  EXPECT_EQ(page.out.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.out.find("<svg"), std::string::npos);
  EXPECT_NE(page.out.find("critical path"), std::string::npos);
}

TEST(CliSchedule, BadInputIsOneLine) {
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --algo tree"),
                     {"unknown attention algorithm 'tree'"});
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --algo usp"),
                     {"head-tail refuses usp"});
  expect_usage_error(run_cplab("schedule --layout magi --cp 2 --seq-len 8 --algo ring"),
                     {"magi refuses ring"});
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 0 --seq-len 8 --algo ring"), {});
  expect_usage_error(
      run_cplab("schedule --layout usp --cp 4 --ring-degree 3 --seq-len 8 --algo usp"),
      {"ring degree R=3"});
  expect_usage_error(
      run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --algo ulysses --heads 3"),
      {"H=3"});
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --dtype i64"),
                     {"--dtype i64"});
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --format pdf"),
                     {"--format 'pdf'"});
}

// The shape is every algorithm's: nonsense is bad input under --algo all too, not a table of
// refusals with exit 0.
TEST(CliSchedule, ShapeNonsenseIsBadInputForEveryAlgo) {
  const std::string row = "schedule --layout head-tail --cp 4 --seq-len 64 --algo all ";
  expect_usage_error(run_cplab(row + "--heads 0"), {"--heads 0"});
  expect_usage_error(run_cplab(row + "--heads -8"), {"--heads -8"});
  expect_usage_error(run_cplab(row + "--head-dim 0"), {"--head-dim 0"});
  expect_usage_error(run_cplab(row + "--heads 8 --kv-heads 16"), {"--kv-heads 16", "H=8"});
  expect_usage_error(run_cplab(row + "--heads 8 --kv-heads 3"), {"--kv-heads 3"});
}

TEST(CliSchedule, CountsPast64BitsAreRefused) {
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 4 --seq-len 1024 --algo ring "
                               "--heads 9223372036854775807 --kv-heads 1 "
                               "--head-dim 9223372036854775807"),
                     {"overflows 64 bits"});
  expect_usage_error(run_cplab("schedule --layout head-tail --cp 4 --seq-len 1024 --algo "
                               "all-gather --heads 2147483648 --head-dim 2147483648"),
                     {"count of bytes overflows 64 bits"});
}

// magi's 512-token chunks make a million-token row 2048 runs; ulysses holds them all on every
// rank, runs × runs blocks: refused before they fill memory, listed as refused under `all`.
TEST(CliSchedule, TooManyBlocksIsRefused) {
  const std::string row = "schedule --layout magi --cp 8 --seq-len 1048576 ";
  expect_usage_error(run_cplab(row + "--algo ulysses"), {"more than 4194304 blocks"});
  const auto all = run_cplab(row + "--algo all");
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find("ulysses     refused: schedule: more than 4194304 blocks"),
            std::string::npos)
      << all.out;
  EXPECT_NE(all.out.find("all-gather      1"), std::string::npos) << all.out;
}

TEST(CliSchedule, TooLongAWalkIsRefusedAtOnce) {
  expect_usage_error(
      run_cplab("schedule --layout head-tail --cp 1024 --seq-len 262144 --algo ring"),
      {"ring at C=1024 on L=262144 walks 536870912 buffer slots"});
}

// Stripe lists every slot as its own range: the JSON of a million tokens is refused before any
// output (the picture included), not written at hundreds of megabytes.
TEST(CliSchedule, JsonPastItsBoundIsRefusedBeforeAnyOutput) {
  ScratchDir dir;
  expect_usage_error(run_cplab("schedule --layout stripe --cp 8 --seq-len 1048576 --algo all "
                               "--json --svg " +
                               dir.file("s.svg")),
                     {"--json: the output would list more than 16777216 slot ranges"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.svg")));
}

// --out writes through a temporary file and a rename; a link (as /dev/stdout is) is written
// through, not replaced.
TEST(CliSchedule, OutThroughALinkKeepsTheLink) {
  ScratchDir dir;
  std::filesystem::create_symlink(dir.file("target.json"), dir.file("link.json"));
  const auto run =
      run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --algo ring --json --out " +
                dir.file("link.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("target.json")))["algo"], "ring");
  expect_usage_error(
      run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --svg " + dir.file("")),
      {"it is a folder"});
}

TEST(CliSchedule, ExplainPointsToSchedule) {
  const auto run = run_cplab("explain --layout head-tail --cp 2 --seq-len 8");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("cplab schedule --layout head-tail --cp 2"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace cplab::testing
