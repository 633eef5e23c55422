// `cplab schedule` end to end on whichever layout cplab knows that runs the algorithms checked:
// the picture and the page, bad input as one line with exit 2, the shape's and the counts'
// bounds, and --out. What one layout's schedules hold (the JSON contract on its slots, the
// algorithms it refuses) is in that layout's own file (layouts/ID_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

// This executable runs cplab and links none of its registries: the layouts are the ones cplab
// names when it refuses a layout it does not know, in its order.
std::vector<std::string> known_layouts() {
  const auto run = run_cplab("schedule --layout '?' --cp 2 --seq-len 8");
  const std::string marker = "known layouts: ";
  const std::size_t at = run.err.find(marker);
  std::vector<std::string> names;
  if (at == std::string::npos) {
    ADD_FAILURE() << "no list of the known layouts in: " << run.err;
    return names;
  }
  std::string list = run.err.substr(at + marker.size());
  if (!list.empty() && list.back() == '\n') list.pop_back();
  for (std::size_t begin = 0; begin < list.size();) {
    const std::size_t end = std::min(list.find(", ", begin), list.size());
    names.push_back(list.substr(begin, end - begin));
    begin = end + 2;
  }
  return names;
}

// The layout these checks of the command itself schedule, whichever it is: the first cplab knows
// that schedules a packed row at C = 2 with all-gather, ring and Ulysses, and a BSHD row too (the
// checks below use both).
const std::string& a_scheduled_layout() {
  static const std::string chosen = [] {
    for (const std::string& name : known_layouts()) {
      const auto run =
          run_cplab("schedule --layout " + name + " --cp 2 --doc-lens 5,3,8 --algo all --json");
      if (run.status != 0) continue;
      if (run_cplab("schedule --layout " + name + " --cp 2 --seq-len 8 --algo ring --json")
              .status != 0)
        continue;
      const nlohmann::json compared = nlohmann::json::parse(run.out);
      bool runs_them = !compared["algos"].empty();
      for (const auto& algo : compared["algos"]) {
        const std::string what = algo["algo"];
        if ((what == "all-gather" || what == "ring" || what == "ulysses") &&
            algo.contains("refused"))
          runs_them = false;
      }
      if (runs_them) return name;
    }
    ADD_FAILURE() << "no known layout schedules a packed row with all-gather, ring and Ulysses";
    return std::string();
  }();
  return chosen;
}

TEST(CliSchedule, DrawsThePictureAndThePage) {
  ScratchDir dir;
  const std::string layout = a_scheduled_layout();
  const auto run = run_cplab("schedule --layout " + layout +
                             " --cp 2 --doc-lens 5,3,8 --algo all --svg " + dir.file("s.svg"));
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string svg = slurp(dir.file("s.svg"));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("data-step=\"1\" data-rank=\"1\""), std::string::npos);
  const auto page = run_cplab("schedule --layout " + layout +
                              " --cp 2 --doc-lens 5,3,8 --algo ring --format html");
  ASSERT_EQ(page.status, 0) << page.err;
  EXPECT_EQ(page.out.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.out.find("<svg"), std::string::npos);
  // The text table keeps its lines inside <pre> (they once ran together: "2 stepscritical path").
  const std::size_t pre = page.out.find("<pre>");
  ASSERT_NE(pre, std::string::npos);
  const std::string table = page.out.substr(pre, page.out.find("</pre>") - pre);
  EXPECT_NE(table.find(" steps\ncritical path"), std::string::npos) << table;
  EXPECT_NE(table.find("\nstep  exchange"), std::string::npos) << table;
}

// --mask reaches the schedule and the layout's work: a window shorter than the row cuts pairs, a
// bad mask is one line naming the forms (SPEC §13.5).
TEST(CliSchedule, MaskCutsTheWorkAndIsNamedInTheOutput) {
  const std::string row = " --cp 2 --seq-len 16 --heads 2 --head-dim 4";
  const std::string schedule = "schedule --layout " + a_scheduled_layout() + row;
  const auto causal = run_cplab(schedule + " --algo ulysses --json");
  const auto window = run_cplab(schedule + " --algo ulysses --json --mask window:4");
  ASSERT_EQ(causal.status, 0) << causal.err;
  ASSERT_EQ(window.status, 0) << window.err;
  const nlohmann::json c = nlohmann::json::parse(causal.out), w = nlohmann::json::parse(window.out);
  EXPECT_EQ(c["mask"], "causal");
  EXPECT_EQ(w["mask"], "window:4");
  // One causal row of 16: 136 pairs; a window of 4 keeps 1 + 2 + 3 + 13·4 = 58 (on H = 2 heads).
  EXPECT_EQ(c["total_work"], 2 * 136);
  EXPECT_EQ(w["total_work"], 2 * 58);
  const auto layout = run_cplab("layout --layout " + a_scheduled_layout() +
                                " --cp 2 --seq-len 16 --json --mask chunked:4");
  ASSERT_EQ(layout.status, 0) << layout.err;
  const nlohmann::json l = nlohmann::json::parse(layout.out);
  EXPECT_EQ(l["mask"], "chunked:4");
  std::int64_t work = 0;
  for (const auto& rank : l["ranks"]) work += rank["causal_work"].get<std::int64_t>();
  EXPECT_EQ(work, 4 * 10);  // four chunks of 4, each 1 + 2 + 3 + 4
  expect_usage_error(run_cplab(schedule + " --mask window:0"), {"window:W"});
  expect_usage_error(run_cplab(schedule + " --mask sliding:4"), {"unknown mask 'sliding:4'"});
}

// Which layout, which algorithm for this mask: `layout --layout all` lists the layouts that lay the
// row out by their slowest rank's work, least first, the refused ones after; both it and
// `schedule --algo all` give each its place (`rank`: 1 + how many are strictly shorter; ties
// share).
TEST(CliSchedule, EveryLayoutAndAlgorithmIsRankedByItsCriticalPath) {
  const auto layouts = run_cplab("layout --layout all --cp 4 --seq-len 64 --json --mask window:5");
  ASSERT_EQ(layouts.status, 0) << layouts.err;
  const nlohmann::json all = nlohmann::json::parse(layouts.out);
  std::int64_t previous = 0, laid_out = 0;
  bool refused_seen = false;
  for (const auto& one : all["layouts"]) {
    if (one.contains("error")) {
      refused_seen = true;
      continue;
    }
    ++laid_out;
    EXPECT_FALSE(refused_seen) << one["layout"] << " comes after a layout that was refused";
    EXPECT_GE(one["max_causal_work"].get<std::int64_t>(), previous) << one["layout"];
    previous = one["max_causal_work"];
    std::int64_t shorter = 0;
    for (const auto& other : all["layouts"])
      shorter += !other.contains("error") && other["max_causal_work"] < one["max_causal_work"];
    EXPECT_EQ(one["rank"], shorter + 1) << one["layout"];
  }
  EXPECT_GE(laid_out, 2);
  const auto algos = run_cplab("schedule --layout " + a_scheduled_layout() +
                               " --cp 2 --seq-len 16 --algo all --json --mask window:3");
  ASSERT_EQ(algos.status, 0) << algos.err;
  const nlohmann::json compared = nlohmann::json::parse(algos.out);
  std::int64_t runs = 0;
  for (const auto& a : compared["algos"]) {
    if (a.contains("refused")) continue;
    ++runs;
    std::int64_t shorter = 0;
    for (const auto& b : compared["algos"])
      shorter += !b.contains("refused") && b["critical_path"] < a["critical_path"];
    EXPECT_EQ(a["rank"], shorter + 1) << a["algo"];
  }
  EXPECT_GE(runs, 2);
}

TEST(CliSchedule, BadInputIsOneLine) {
  const std::string schedule = "schedule --layout " + a_scheduled_layout();
  expect_usage_error(run_cplab(schedule + " --cp 2 --seq-len 8 --algo tree"),
                     {"unknown attention algorithm 'tree'"});
  expect_usage_error(run_cplab(schedule + " --cp 0 --seq-len 8 --algo ring"), {});
  expect_usage_error(run_cplab(schedule + " --cp 2 --seq-len 8 --algo ulysses --heads 3"), {"H=3"});
  expect_usage_error(run_cplab(schedule + " --cp 2 --seq-len 8 --dtype i64"), {"--dtype i64"});
  expect_usage_error(run_cplab(schedule + " --cp 2 --seq-len 8 --format pdf"), {"--format 'pdf'"});
}

// The shape is every algorithm's: nonsense is bad input under --algo all too, not a table of
// refusals with exit 0.
TEST(CliSchedule, ShapeNonsenseIsBadInputForEveryAlgo) {
  const std::string row =
      "schedule --layout " + a_scheduled_layout() + " --cp 4 --seq-len 64 --algo all ";
  expect_usage_error(run_cplab(row + "--heads 0"), {"--heads 0"});
  expect_usage_error(run_cplab(row + "--heads -8"), {"--heads -8"});
  expect_usage_error(run_cplab(row + "--head-dim 0"), {"--head-dim 0"});
  expect_usage_error(run_cplab(row + "--heads 8 --kv-heads 16"), {"--kv-heads 16", "H=8"});
  expect_usage_error(run_cplab(row + "--heads 8 --kv-heads 3"), {"--kv-heads 3"});
}

TEST(CliSchedule, CountsPast64BitsAreRefused) {
  const std::string row = "schedule --layout " + a_scheduled_layout() + " --cp 4 --seq-len 1024 ";
  expect_usage_error(run_cplab(row + "--algo ring --heads 9223372036854775807 --kv-heads 1 "
                                     "--head-dim 9223372036854775807"),
                     {"overflows 64 bits"});
  expect_usage_error(run_cplab(row + "--algo all-gather --heads 2147483648 --head-dim 2147483648"),
                     {"count of bytes overflows 64 bits"});
}

TEST(CliSchedule, TooLongAWalkIsRefusedAtOnce) {
  expect_usage_error(run_cplab("schedule --layout " + a_scheduled_layout() +
                               " --cp 1024 --seq-len 262144 --algo ring"),
                     {"ring at C=1024 on L=262144 walks 536870912 buffer slots"});
}

// --out writes through a temporary file and a rename; a link (as /dev/stdout is) is written
// through, not replaced.
TEST(CliSchedule, OutThroughALinkKeepsTheLink) {
  ScratchDir dir;
  const std::string schedule = "schedule --layout " + a_scheduled_layout();
  std::filesystem::create_symlink(dir.file("target.json"), dir.file("link.json"));
  const auto run =
      run_cplab(schedule + " --cp 2 --seq-len 8 --algo ring --json --out " + dir.file("link.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("target.json")))["algo"], "ring");
  expect_usage_error(run_cplab(schedule + " --cp 2 --seq-len 8 --svg " + dir.file("")),
                     {"it is a folder"});
}

TEST(CliSchedule, ExplainPointsToSchedule) {
  const std::string layout = a_scheduled_layout();
  const auto run = run_cplab("explain --layout " + layout + " --cp 2 --seq-len 8");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("cplab schedule --layout " + layout + " --cp 2"), std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace cplab::testing
