// ptrr (SPEC §10.2): the worked examples of §9.11 by the reference.
#include "layouts/ptrr.hpp"

#include "reference/plan.hpp"
#include "reference/work.hpp"
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

}  // namespace
}  // namespace cplab::testing
