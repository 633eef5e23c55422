// What each slot of a planned row says (SPEC §1-§3, §8), for every layout: at C = 1 each keeps the
// caller's row as it is; and the load-balance measure of §8. Each layout's own row facts and load
// balance claims are in tests/reference/layouts/ID_test.cpp.
#include "reference/work.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::plan_row;
using I32s = std::vector<std::int32_t>;

TEST(RowFacts, EveryLayoutAtCp1IsTheIdentity) {
  // Documents of 3 and 5 tokens occupying 4 and 5 slots, then 2 slots of caller row padding: at
  // C = 1 every slot stays where the caller put it.
  const Ints docs{3, 5}, padded{4, 5};
  const std::vector<Ints> in_place{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}};
  for (const auto& [layout, cp] : testsupport::layouts_at({1})) {
    SCOPED_TRACE(layout);
    const RowPlan row = plan_row(make_spec(layout, cp), 11, &docs, &padded);
    EXPECT_EQ(row.padded_len, 11);
    EXPECT_EQ(row.index, in_place);
    EXPECT_EQ(row.caller_pos, in_place[0]);
    EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 2, 2, 2, 2, 2, 0, 0}));
    EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 4, 9}));
  }
}

TEST(LoadBalance, ImbalanceIsMaxOverMean) {
  EXPECT_DOUBLE_EQ(reference::imbalance({10, 30}), 1.5);
  EXPECT_DOUBLE_EQ(reference::imbalance({0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(reference::imbalance({5, 7, 9}), 9.0 / 7.0);
}

}  // namespace
}  // namespace cplab::testing
