// The loss engine (check/loss_check.hpp) that `cplab loss` and cplab.testing.check_loss share:
// what every rank must return is the reference's share, a gradient that is right everywhere
// passes, and a wrong element is found where it is, with the values on both sides.
#include "check/loss_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::check {
namespace {

constexpr std::int64_t kRows = 2, kSeq = 24, kVocab = 5;
constexpr double kScaling = 0.3;

struct Inputs {
  Batch batch;
  std::vector<Tensor> logits;  // per depth, [B, S, V]
  Tensor labels, valid;
};

Inputs random_inputs(std::int64_t depths, unsigned seed) {
  std::mt19937 draw(seed);
  std::uniform_real_distribution<float> logit(-3.0f, 3.0f);
  Inputs in;
  in.labels = Tensor(DType::i64, {kRows, kSeq});
  in.valid = Tensor(DType::b8, {kRows, kSeq});
  for (std::int64_t i = 0; i < kRows * kSeq; ++i) {
    in.labels.set(i, draw() % 7 == 0 ? -100.0 : static_cast<double>(draw() % kVocab));
    in.valid.set(i, draw() % 5 != 0);
  }
  for (std::int64_t k = 0; k < depths; ++k) {
    Tensor one(DType::f32, {kRows, kSeq, kVocab});
    for (std::int64_t i = 0; i < one.numel(); ++i) one.set(i, logit(draw));
    in.logits.push_back(std::move(one));
  }
  in.batch.add(keys::input_ids, Tensor(DType::i64, {kRows, kSeq}));
  in.batch.add(keys::labels, in.labels);
  in.batch.add(keys::loss_mask, in.valid);
  return in;
}

// Every layout that plans this BSHD batch at C = 2 and 3 (its own options at their defaults).
std::vector<ShardPlan> plans(const Batch& batch) {
  std::vector<ShardPlan> out;
  for (const auto& [layout, cp] : testsupport::layouts_at({2, 3})) {
    if (!testsupport::takes_rows(layout, false)) continue;
    LayoutSpec spec;
    spec.layout = layout;
    spec.cp = cp;
    try {
      out.push_back(reference::plan(spec, batch));
    } catch (const Error&) {
      // a layout whose defaults do not take S = 24 at this C: the others cover the engine
    }
  }
  return out;
}

// What a correct rank returns on depth k's logits: weight × C × the global gradient at its slots.
Tensor right_gradient(const ShardPlan& plan, const LossExpectation& e, std::int64_t rank,
                      std::int64_t depth, double weight) {
  Tensor grad = reference::select_rank(plan, e.at(depth).grad_global, 1, rank);
  for (std::int64_t i = 0; i < grad.numel(); ++i)
    grad.set(i, grad.get(i) * weight * static_cast<double>(e.cp()));
  return grad;
}

TEST(LossCheck, RightRanksPassAndCombineToTheGlobalLoss) {
  const Inputs in = random_inputs(3, 11);
  const std::vector<ShardPlan> every = plans(in.batch);
  ASSERT_GE(every.size(), 4u);
  for (const ShardPlan& plan : every) {
    const LossExpectation e(plan, in.logits, in.labels, in.valid);
    ASSERT_EQ(e.depths(), 3);
    double mean_total = 0.0;
    for (std::int64_t r = 0; r < e.cp(); ++r) {
      mean_total += e.rank_total(r, kScaling) / static_cast<double>(e.cp());
      double by_hand = 0.0;
      for (std::int64_t k = 1; k <= 3; ++k) {
        const double weight = e.depth_weight(k, kScaling);
        EXPECT_DOUBLE_EQ(weight, k == 1 ? 1.0 : kScaling / 2.0);
        by_hand += weight * e.at(k).rank_loss[static_cast<std::size_t>(r)];
        const Tensor grad = right_gradient(plan, e, r, k, weight);
        const GradDifference d = e.grad_difference(plan, r, k, grad.data<float>(), weight, 1e-6);
        EXPECT_LE(d.max_abs_error, 1e-6);
        EXPECT_FALSE(d.first.has_value());
      }
      EXPECT_NEAR(e.rank_total(r, kScaling), by_hand, 1e-12);
    }
    EXPECT_NEAR(mean_total, e.global_total(kScaling).total, 1e-9);
  }
}

TEST(LossCheck, FindsTheFirstWrongElementWhereItIs) {
  const Inputs in = random_inputs(2, 12);
  const std::vector<ShardPlan> every = plans(in.batch);
  ASSERT_FALSE(every.empty());
  for (const ShardPlan& plan : every) {
    const LossExpectation e(plan, in.logits, in.labels, in.valid);
    const std::int64_t rank = e.cp() - 1, depth = 2, row = 1, slot = 3, logit = 2;
    const double weight = e.depth_weight(depth, kScaling);
    Tensor grad = right_gradient(plan, e, rank, depth, weight);
    const std::int64_t local = plan.rows[0].local_len();
    const std::int64_t at = (row * local + slot) * kVocab + logit;
    const double want = grad.get(at);
    grad.set(at, want + 0.25);
    const GradDifference d = e.grad_difference(plan, rank, depth, grad.data<float>(), weight, 1e-3);
    ASSERT_TRUE(d.first.has_value());
    EXPECT_EQ(d.first->row, row);
    EXPECT_EQ(d.first->slot, slot);
    EXPECT_EQ(d.first->global_slot, plan.rows[1].index[static_cast<std::size_t>(rank)][slot]);
    EXPECT_EQ(d.first->logit, logit);
    EXPECT_NEAR(d.first->got, want + 0.25, 1e-6);
    EXPECT_NEAR(d.first->want, want, 1e-6);
    EXPECT_NEAR(d.max_abs_error, 0.25, 1e-6);
  }
}

TEST(LossCheck, ANonFiniteGradientIsNeverAMatch) {
  const Inputs in = random_inputs(1, 13);
  const std::vector<ShardPlan> every = plans(in.batch);
  ASSERT_FALSE(every.empty());
  const ShardPlan& plan = every.front();
  const LossExpectation e(plan, in.logits, in.labels, in.valid);
  Tensor grad = right_gradient(plan, e, 0, 1, 1.0);
  grad.set(7, std::numeric_limits<double>::quiet_NaN());
  const GradDifference d = e.grad_difference(plan, 0, 1, grad.data<float>(), 1.0, 1e30);
  EXPECT_TRUE(std::isinf(d.max_abs_error));
  ASSERT_TRUE(d.first.has_value());
  EXPECT_EQ(d.first->slot, 7 / kVocab);
  EXPECT_FALSE(loss_matches(std::numeric_limits<double>::quiet_NaN(), 1.0, 1e30));
  EXPECT_TRUE(loss_matches(2.0001, 2.0, 1e-4));
  EXPECT_FALSE(loss_matches(2.001, 2.0, 1e-4));
}

TEST(LossCheck, RefusesAGradientOfTheWrongSizeAndAMissingDepth) {
  const Inputs in = random_inputs(1, 14);
  const ShardPlan plan = plans(in.batch).front();
  const LossExpectation e(plan, in.logits, in.labels, in.valid);
  const std::vector<float> short_grad(3, 0.0f);
  EXPECT_THROW(e.grad_difference(plan, 0, 1, short_grad, 1.0, 1e-3), Error);
  EXPECT_THROW(e.at(2), Error);
  EXPECT_THROW(LossExpectation(plan, {}, in.labels, in.valid), Error);
}

// `cplab loss` builds one depth at a time and drops each compared depth's gradient: the same
// expectation as all depths at once, and a released gradient is never compared against.
TEST(LossCheck, DepthByDepthIsTheSameExpectation) {
  const Inputs in = random_inputs(3, 15);
  const ShardPlan plan = plans(in.batch).front();
  const LossExpectation all(plan, in.logits, in.labels, in.valid);
  LossExpectation each;
  EXPECT_THROW(each.cp(), Error);
  for (std::int64_t k = 1; k <= 3; ++k) {
    each.add_depth(plan, in.logits[static_cast<std::size_t>(k - 1)], in.labels, in.valid);
    ASSERT_EQ(each.depths(), k);
    EXPECT_EQ(each.at(k).global_mean, all.at(k).global_mean);
    EXPECT_EQ(each.at(k).contributing_total, all.at(k).contributing_total);
    const Tensor grad = right_gradient(plan, all, 0, k, 1.0);
    EXPECT_LE(each.grad_difference(plan, 0, k, grad.data<float>(), 1.0, 0.0).max_abs_error, 0.0);
    each.release_gradient(k);
    EXPECT_THROW(each.grad_difference(plan, 0, k, grad.data<float>(), 1.0, 1e-3), Error);
  }
  EXPECT_EQ(each.global_total(kScaling).total, all.global_total(kScaling).total);
  EXPECT_EQ(each.rank_total(1, kScaling), all.rank_total(1, kScaling));
  EXPECT_THROW(each.release_gradient(4), Error);
}

}  // namespace
}  // namespace cplab::check
