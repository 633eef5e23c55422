// shifted_cp_loss against the reference for every layout, C and batch shape: loss_r, N, the
// local counts and ∂loss_r/∂logits = C × the global gradient; N = 0 gives zero loss and gradient.
#include <gtest/gtest.h>

#include "loss_check.hpp"

namespace cplab::simtest {
namespace {

class LossTest : public ::testing::TestWithParam<LayoutCp> {};

TEST_P(LossTest, rank_losses_and_gradients_equal_the_reference) {
  const auto& [layout, cp] = GetParam();
  int checked = 0;
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    if (!error_of([&] { reference::plan(spec, c.batch); }).empty()) continue;
    EXPECT_EQ(check_loss_against_reference(spec, c.batch), "");
    ++checked;
  }
  if (checked == 0)
    GTEST_SKIP() << layout << " refuses every batch at cp=" << cp
                 << " (PartitionTest checks the sim refuses too)";
  EXPECT_GE(checked, 3) << "too few batch shapes to mean anything";
}

TEST_P(LossTest, nothing_contributing_gives_zero_loss_and_gradient) {
  const auto& [layout, cp] = GetParam();
  Batch batch = packed_batch({{5, 3, 8}}, 16);
  Tensor ignored(DType::i64, {1, 16});
  for (std::int64_t i = 0; i < 16; ++i) ignored.set(i, static_cast<double>(kIgnoreIndex));
  batch.add(keys::labels, ignored);
  const LayoutSpec spec = spec_for(layout, cp);
  if (!error_of([&] { reference::plan(spec, batch); }).empty())
    GTEST_SKIP() << "layout refuses this batch";
  EXPECT_EQ(check_loss_against_reference(spec, batch), "");
  on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
    sim::SimImplementation sim;
    const ShardLayout& layout_r = shards[0].layout;
    const Tensor logits = sim.shard_token_tensor(ctx.comm, layout_r, logits_for(1, 16, 5), 1, 0.0);
    const LossOutput out = sim.shifted_cp_loss(ctx.comm, layout_r, logits,
                                               shards[0].local.at(keys::labels), Tensor(), 1);
    CPLAB_CHECK(out.loss == 0.0 && out.contributing_total == 0,
                "N = 0 must give loss 0, got {} with N={}", out.loss, out.contributing_total);
    for (float g : out.grad.data<float>())
      CPLAB_CHECK(g == 0.0f, "N = 0 must give a zero gradient, got {}", g);
  });
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, LossTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

}  // namespace
}  // namespace cplab::simtest
