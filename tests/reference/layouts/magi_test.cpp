// magi (SPEC §3.5): the worked examples of §9.5 and §9.6 by the reference.
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

TEST(SpecExample5, MagiOneCausalDocument) {
  const RowPlan row = plan_row(make_spec("magi", 4), 32);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 42, 58, 74, 90, 106, 122}));
  for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(row.map_costs[j], 16 * j + 10);
  // The assignment, rank-major: rank 0 {0, 7}, rank 1 {1, 6}, rank 2 {2, 5}, rank 3 {3, 4}.
  EXPECT_EQ(row.map.table, (Ints{0, 7, 1, 6, 2, 5, 3, 4}));
  EXPECT_EQ(causal_work(row), (Ints{132, 132, 132, 132}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
}

TEST(SpecExample6, MagiTwoDocumentsOf8And24) {
  const Ints docs{8, 24};
  const RowPlan row = plan_row(make_spec("magi", 4), sum(docs), &docs);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 10, 26, 42, 58, 74, 90}));
  EXPECT_EQ(row.map.table, (Ints{0, 7, 2, 6, 1, 5, 3, 4}));  // rank-major, two chunks each
  Ints loads;
  for (std::size_t r = 0; r < 4; ++r)
    loads.push_back(row.map_costs[row.map.table[2 * r]] + row.map_costs[row.map.table[2 * r + 1]]);
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_EQ(causal_work(row), loads);
}

}  // namespace
}  // namespace cplab::testing
