// head-tail (SPEC §3.3): the worked examples of §9.1 by the reference.
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

TEST(SpecExample1, HeadTailCp4OnSixteenTokens) {
  const RowPlan row = plan_row(make_spec("head-tail", 4), 16);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
  EXPECT_EQ(causal_work(row), (Ints{34, 34, 34, 34}));
}

TEST(SpecExample1, HeadTailCp2OnEightTokens) {
  EXPECT_EQ(plan_row(make_spec("head-tail", 2), 8).index,
            (std::vector<Ints>{{0, 1, 6, 7}, {2, 3, 4, 5}}));
}

TEST(SpecExample1, OwnerOfSlot13AtCp2) {
  const RowPlan row =
      plan_row(make_spec("head-tail", 2), 16);  // c = 4: q = 3 >= C, rank 0, offset 5
  EXPECT_EQ(row.index[0][5], 13);
}

}  // namespace
}  // namespace cplab::testing
