// ptrr (SPEC §10.2): the worked examples of §9.11 by the reference and through `cplab layout`,
// and its refusals there.
#include "layouts/ptrr.hpp"

#include <map>

#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

// SPEC §9.11: torch's docstring example, block size 1, documents of 4, 8 and 4 tokens, C = 2.
TEST(SpecExample11, PtrrTorchDocstringExample) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 1);
  const Ints docs{4, 8, 4};
  const RowPlan row = plan_row(spec, 16, &docs);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.map_costs, (Ints{1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{2, 3, 5, 6, 8, 11, 12, 13}, {0, 1, 4, 7, 9, 10, 14, 15}}));
  EXPECT_EQ(row.map.table, (Ints{2, 3, 5, 6, 8, 11, 12, 13, 0, 1, 4, 7, 9, 10, 14, 15}));
  EXPECT_EQ(row.map.unit, 1);
  EXPECT_EQ(causal_work(row), (Ints{28, 28}));  // at B = 1 a block's cost is its query's work
}

TEST(SpecExample11, PtrrBlocksOfTwoKeepTheirSlotsTogether) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 2);
  const Ints docs{4, 8, 4};
  const RowPlan row = plan_row(spec, 16, &docs);
  // Blocks [0,1] [2,3] | [4,5] .. [10,11] | [12,13] [14,15]: costs 1 2 | 1 2 3 4 | 1 2.
  EXPECT_EQ(row.map_costs, (Ints{1, 2, 1, 2, 3, 4, 1, 2}));
  // Sorted 5 4 | 1 3 | 7 0 | 2 6, odd rows reversed: rank 0 gets 5, 3, 7, 6.
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{6, 7, 10, 11, 12, 13, 14, 15}, {0, 1, 2, 3, 4, 5, 8, 9}}));
}

TEST(SpecExample11, PtrrRefusesBlocksThatDoNotDivideOverTheRanks) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 4);
  EXPECT_ERROR(plan_row(spec, 10), "3 blocks of B=4, which do not divide over cp=2");
  EXPECT_EQ(plan_row(spec, 13).padded_len, 16);  // 4 blocks, the last one padded
  spec.cp = 1;
  EXPECT_EQ(plan_row(spec, 10).padded_len, 10);  // C = 1: the identity, nothing padded
}

// SPEC §9.11 through `cplab layout --layout ptrr --block-size B`: JSON, table, picture, refusal.
TEST(CliLayout, Example11Ptrr) {
  const auto out = layout_json("--layout ptrr --cp 2 --doc-lens 4,8,4 --block-size 1");
  EXPECT_EQ(out["layout"], "ptrr");
  EXPECT_EQ(out["padded_seq_len"], 16);
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{2, 3, 5, 6, 8, 11, 12, 13}, {0, 1, 4, 7, 9, 10, 14, 15}}));
  EXPECT_EQ(out["ranks"][0]["causal_work"], 28);
  EXPECT_EQ(out["ranks"][1]["causal_work"], 28);
  const testsupport::CliRun table =
      testsupport::run_cplab("layout --layout ptrr --cp 2 --seq-len 13 --block-size 4");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("ptrr cp=2 block_size=4: padded length 16"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("assigned"), std::string::npos) << table.out;
  const std::string svg = ::testing::TempDir() + "ptrr_layout.svg";
  const testsupport::CliRun picture = testsupport::run_cplab(
      "layout --layout ptrr --cp 2 --seq-len 16 --block-size 2 --svg " + svg);
  EXPECT_EQ(picture.status, 0) << picture.err;
  EXPECT_NE(picture.out.find("picture: " + svg), std::string::npos) << picture.out;
  testsupport::expect_usage_error(
      testsupport::run_cplab("layout --layout ptrr --cp 2 --seq-len 10 --block-size 4"),
      {"ptrr: L=12 is 3 blocks of B=4, which do not divide over cp=2"});
  testsupport::expect_usage_error(
      testsupport::run_cplab("layout --layout ptrr --cp 2 --seq-len 10 --block-size 0"),
      {"--block-size 0: ptrr block size B must be in [1, 16777216] at cp=2"});
}

TEST(CliLayout, EveryLayoutSideBySideIncludesPtrr) {
  const testsupport::CliRun run =
      testsupport::run_cplab("layout --layout all --cp 2 --doc-lens 4,8,4 --block-size 1 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& one : out["layouts"]) by_name[one["layout"].get<std::string>()] = one;
  ASSERT_EQ(by_name.count("ptrr"), 1u) << run.out;
  const nlohmann::json& ptrr = by_name.at("ptrr");
  EXPECT_EQ(ptrr["spec"], "ptrr cp=2 block_size=1");
  EXPECT_EQ(ptrr["causal_work"], (Ints{28, 28}));
  EXPECT_EQ(ptrr["imbalance"], 1.0);
}

TEST(CliLayout, PtrrBadArgumentsExit2WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--layout ptrr --cp 2 --block-size 16777217 --seq-len 16", "B must be in [1, 16777216]"},
      {"--layout ptrr --cp 2 --block-size 16777216 --seq-len 16", "do not divide over cp=2"},
      {"--layout ptrr --cp 2 --block-size nan --seq-len 16", "--block-size"},
  };
  for (const auto& [args, part] : cases) {
    testsupport::expect_usage_error(testsupport::run_cplab("layout " + args), {part}, args);
  }
}

}  // namespace
}  // namespace cplab::testing
