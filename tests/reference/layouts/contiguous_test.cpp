// contiguous (SPEC §3.2): the worked example of §9.2 by the reference and its shard.
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

TEST(SpecExample2, ContiguousPadsSixTokensToEight) {
  LayoutSpec spec = make_spec("contiguous", 2);
  spec.pad_token_id = 7;
  const Batch batch = bshd_batch(1, 6);
  const ShardPlan plan = reference::plan(spec, batch);
  ASSERT_EQ(plan.rows[0].padded_len, 8);
  EXPECT_EQ(plan.rows[0].index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const Batch rank1 = reference::shard_batch(plan, batch)[0][1];
  // Rank 1 holds slots 4..7: caller tokens 4, 5, then the pad slots 6, 7.
  EXPECT_EQ(rank1.at(keys::input_ids).to_vector<std::int64_t>(), (Ints{4, 5, 7, 7}));
  EXPECT_EQ(rank1.at(keys::labels).to_vector<std::int64_t>(), (Ints{4, 5, -100, -100}));
  EXPECT_EQ(rank1.at(keys::position_ids).to_vector<std::int64_t>(), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(rank1.at(keys::loss_mask).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{1, 1, 0, 0}));
}

}  // namespace
}  // namespace cplab::testing
