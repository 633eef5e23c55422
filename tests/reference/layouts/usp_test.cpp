// usp (SPEC §10.4): the worked examples of §9.13 by the reference and through `cplab layout`, the
// closed form of its rows, and its refusals.
#include "layouts/usp.hpp"

#include "layouts/head_tail_map.hpp"
#include "layouts/layout_map.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

// SPEC §9.13: usp, ring degree R × Ulysses degree U = C, global rank ring·U + ulysses.
LayoutSpec usp_spec(std::int64_t cp, std::int64_t ring) {
  LayoutSpec spec = make_spec("usp", cp);
  layouts::usp_ring_degree.set(spec, ring);
  return spec;
}

// The closed form (layouts/usp_map.hpp) of a reference row, every rank.
std::vector<Ints> usp_closed_form(const RowPlan& row) {
  const sim::LayoutMap map(sim::layout_descriptor("usp"), row.cp, row.padded_len, row.map);
  std::vector<Ints> index;
  for (std::int64_t r = 0; r < row.cp; ++r) index.push_back(map.local_index(r));
  return index;
}

TEST(SpecExample13, UspRing2Ulysses2OnSixteenTokens) {
  const RowPlan row = plan_row(usp_spec(4, 2), 16);
  EXPECT_EQ(row.padded_len, 16);
  const std::vector<Ints> want = {{0, 1, 2, 3}, {12, 13, 14, 15}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  EXPECT_EQ(row.index, want);
  EXPECT_EQ(usp_closed_form(row), want);
  const Ints work = causal_work(row);
  EXPECT_EQ(work, (Ints{10, 58, 26, 42}));
  EXPECT_EQ(work[0] + work[1], 68);  // per ring group: head-tail's 34 × U
  EXPECT_EQ(work[2] + work[3], 68);
}

TEST(SpecExample13, UspOwnerOfSlot13) {
  const RowPlan row = plan_row(usp_spec(4, 2), 16);
  EXPECT_EQ(row.index[1][1], 13);
  const sim::LayoutMap map(sim::layout_descriptor("usp"), 4, 16, row.map);
  const index_math::Slot slot = map.owner(13);
  EXPECT_EQ(slot.rank, 1);
  EXPECT_EQ(slot.offset, 1);
}

TEST(SpecExample13, UspPartAcrossTheTwoChunks) {
  const RowPlan row = plan_row(usp_spec(6, 2), 24);
  const std::vector<Ints> want = {{0, 1, 2, 3}, {4, 5, 18, 19},   {20, 21, 22, 23},
                                  {6, 7, 8, 9}, {10, 11, 12, 13}, {14, 15, 16, 17}};
  EXPECT_EQ(row.index, want);
  EXPECT_EQ(usp_closed_form(row), want);
  EXPECT_EQ(causal_work(row), (Ints{10, 50, 90, 34, 50, 66}));
}

TEST(SpecExample13, UspPadsToTwoC) {
  const RowPlan row = plan_row(usp_spec(4, 2), 10);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index, plan_row(usp_spec(4, 2), 16).index);
  EXPECT_EQ(row.valid_tokens, (Ints{4, 0, 4, 2}));
}

TEST(SpecExample13, UspDegenerateDegrees) {
  EXPECT_EQ(plan_row(usp_spec(2, 1), 8).index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const RowPlan ring_only = plan_row(usp_spec(4, 4), 16);
  // A ring of all C ranks: rank r holds chunk r, then chunk 2C-1-r, of c = L/(2C) slots each (the
  // closed form index_math::HeadTailMap).
  const index_math::HeadTailMap ring{.cp = 4, .padded_len = 16};
  std::vector<Ints> head_then_tail(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    for (std::int64_t k = 0; k < ring.local_len(); ++k)
      head_then_tail[r].push_back(ring.global_index(r, k));
  }
  EXPECT_EQ(head_then_tail,
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
  EXPECT_EQ(ring_only.index, head_then_tail);
  EXPECT_EQ(usp_closed_form(ring_only), ring_only.index);
}

TEST(SpecExample13, UspRingDegreeMustDivideC) {
  EXPECT_ERROR(plan_row(usp_spec(4, 3), 16), "ring degree R=3 does not divide the CP size C=4");
}

TEST(CliLayout, Example13UspNamesRingAndUlyssesRanks) {
  const auto out = layout_json("--layout usp --cp 4 --ring-degree 2 --seq-len 16");
  EXPECT_EQ(out["layout"], "usp");
  EXPECT_EQ(out["ring_degree"], 2);
  EXPECT_EQ(out["ulysses_degree"], 2);
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{0, 1, 2, 3}, {12, 13, 14, 15}, {4, 5, 6, 7}, {8, 9, 10, 11}}));
  const std::vector<std::pair<int, int>> ranks = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(out["ranks"][r]["ring_rank"], ranks[r].first) << r;
    EXPECT_EQ(out["ranks"][r]["ulysses_rank"], ranks[r].second) << r;
  }
  EXPECT_EQ(out["ranks"][1]["causal_work"], 58);
  const testsupport::CliRun table =
      testsupport::run_cplab("layout --layout usp --cp 4 --ring-degree 2 --seq-len 16");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("usp cp=4 ring_degree=2"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("ring_rank 1, ulysses_rank 0"), std::string::npos) << table.out;
  // Other layouts carry none of it.
  const std::string other = testsupport::a_plain_layout();
  ASSERT_NE(other, "usp");
  EXPECT_FALSE(
      layout_json("--layout " + other + " --cp 4 --seq-len 16")["ranks"][0].contains("ring_rank"));
}

TEST(CliLayout, UspBadArgumentsExit2WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--layout usp --cp 4 --ring-degree 3 --seq-len 16", "ring degree R=3 does not divide"},
      {"--layout usp --cp 4 --ring-degree 0 --seq-len 16", "--ring-degree 0: usp ring degree R"},
      {"--layout usp --cp 4 --ring-degree 1025 --seq-len 16", "R must be in [1, 1024]"},
      // Past int64: the value as typed, not the bound CLI11 would saturate it to.
      {"--layout usp --cp 4 --ring-degree 9223372036854775808 --seq-len 16",
       "--ring-degree '9223372036854775808': outside the range of a 64-bit integer"},
  };
  for (const auto& [args, part] : cases) {
    testsupport::expect_usage_error(testsupport::run_cplab("layout " + args), {part}, args);
  }
}

}  // namespace
}  // namespace cplab::testing
