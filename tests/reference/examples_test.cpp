// SPEC §9.7 and §9.8: the worked examples of the shifted loss, with exactly the numbers given
// there. Each layout's worked examples are in its own tests/reference/layouts/ID_test.cpp.
#include <cmath>

#include "reference/loss.hpp"
#include "reference/verbs.hpp"
#include "support.hpp"

namespace cplab::testing {
namespace {

// Example 7: the target of every local token, in local order, tokens t_k labelled k.
std::vector<Ints> local_targets(const Batch& batch) {
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  const Tensor logits(DType::f32, {1, 16, 16});
  Tensor valid(DType::b8, {1, 16});
  for (std::int64_t i = 0; i < 16; ++i) valid.set(i, 1);
  const auto loss = reference::shifted_loss_caller(plan, logits, batch.at(keys::labels), valid);
  std::vector<Ints> targets(2);
  for (std::int64_t r = 0; r < 2; ++r) targets[r] = local_values(plan.rows[0], loss.target[0], r);
  return targets;
}

TEST(SpecExample7, ShiftedTargetsCrossRanks) {
  const auto targets = local_targets(bshd_batch(1, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_NE(targets[0][3], 12) << "a local shift after the split";
}

TEST(SpecExample7, DocumentBoundaryEndsTheShift) {
  const auto targets = local_targets(packed_batch({{8, 8}}, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, -1, 9, 10, 11, 12}));
}

TEST(SpecExample8, LossIsNormalisedByTheGlobalCount) {
  // head-tail C=2, L=16: rank 0 holds 0-3 and 12-15, rank 1 holds 4-11. With slot 14 invalid and
  // slot 15 without a target, rank 0 has 6 contributing tokens and rank 1 has 8.
  const Batch batch = bshd_batch(1, 16);
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  Tensor labels(DType::i64, {1, 16}), valid(DType::b8, {1, 16}), logits(DType::f32, {1, 16, 2});
  for (std::int64_t g = 0; g < 16; ++g) {
    labels.set(g, 1);
    valid.set(g, g == 14 ? 0 : 1);
    // CE([a, 0], 1) = log(1 + e^a): choose a for CE 1.0 on rank 0's tokens and 2.0 on rank 1's.
    const double ce = (g >= 4 && g < 12) ? 2.0 : 1.0;
    logits.set(g * 2, std::log(std::exp(ce) - 1.0));
  }
  const auto loss = reference::shifted_loss(plan, logits, labels, valid);
  EXPECT_EQ(loss.contributing_total, 14);
  EXPECT_EQ(loss.rank_contributing, (Ints{6, 8}));
  EXPECT_NEAR(loss.global_mean, 22.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.global_mean, 1.5714286, 1e-6);
  EXPECT_NEAR(loss.rank_loss[0], 6.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.rank_loss[1], 16.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR((loss.rank_loss[0] + loss.rank_loss[1]) / 2.0, 22.0 / 14.0, 1e-6);
  // Each rank's own mean (its CE sum over its own count) is the classic bug: 1.0 and 2.0, mean 1.5.
  double mean_of_local_means = 0.0;
  for (std::int64_t r = 0; r < 2; ++r) {
    const double rank_sum = loss.rank_loss[r] * 14.0 / 2.0;
    mean_of_local_means += rank_sum / static_cast<double>(loss.rank_contributing[r]) / 2.0;
  }
  EXPECT_NEAR(mean_of_local_means, 1.5, 1e-6);
  EXPECT_GT(std::abs(loss.global_mean - mean_of_local_means), 0.05);
}

}  // namespace
}  // namespace cplab::testing
