// usp (SPEC §10.4): the worked examples of §9.13 by the reference, and the closed form of its rows.
#include "layouts/usp.hpp"

#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "sim/layout_map.hpp"
#include "tests/reference/support.hpp"

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

// The closed form (sim/layouts/usp_map.hpp) of a reference row, every rank.
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
  EXPECT_EQ(ring_only.index, plan_row(make_spec("head-tail", 4), 16).index);
  EXPECT_EQ(usp_closed_form(ring_only), ring_only.index);
}

TEST(SpecExample13, UspRingDegreeMustDivideC) {
  EXPECT_ERROR(plan_row(usp_spec(4, 3), 16), "ring degree R=3 does not divide the CP size C=4");
}

}  // namespace
}  // namespace cplab::testing
