// The shifted loss (SPEC §6): equal to the HF shifted mean on the unsharded caller batch for every
// layout, split into rank shares that average to it, and with the gradient finite differences give.
#include "reference/loss.hpp"

#include <cmath>
#include <random>

#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::shifted_loss;
using reference::shifted_loss_caller;

struct CallerInputs {
  Tensor logits, labels, valid;
};

CallerInputs random_inputs(std::int64_t rows, std::int64_t seq, std::int64_t vocab, unsigned seed) {
  std::mt19937 draw(seed);
  std::uniform_real_distribution<float> logit(-3.0f, 3.0f);
  CallerInputs in{Tensor(DType::f32, {rows, seq, vocab}), Tensor(DType::i64, {rows, seq}),
                  Tensor(DType::b8, {rows, seq})};
  for (std::int64_t i = 0; i < in.logits.numel(); ++i) in.logits.set(i, logit(draw));
  for (std::int64_t i = 0; i < rows * seq; ++i) {
    in.labels.set(i, draw() % 7 == 0 ? -100.0 : static_cast<double>(draw() % vocab));
    in.valid.set(i, draw() % 5 != 0);
  }
  return in;
}

double cross_entropy(const Tensor& logits, std::int64_t at, std::int64_t vocab,
                     std::int64_t label) {
  double sum = 0.0;
  for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(logits.get(at * vocab + v));
  return std::log(sum) - logits.get(at * vocab + label);
}

// HF's shifted mean on the caller rows: token t predicts labels[t+k] (depth k, SPEC §6.1); in
// packed rows only inside a document (the slots seq_lens_padded gives it).
double hf_shifted_mean(const Batch& batch, const CallerInputs& in, std::int64_t vocab,
                       std::int64_t depth = 1) {
  const std::int64_t rows = batch.rows(), seq = batch.seq_len();
  double total = 0.0;
  std::int64_t count = 0;
  for (std::int64_t b = 0; b < rows; ++b) {
    Ints doc(static_cast<std::size_t>(seq), 0);
    if (batch.packed()) {
      std::int64_t at = 0;
      for (std::size_t i = 0; i < batch.seq_lens[b].size(); ++i) {
        const std::int64_t span =
            batch.seq_lens_padded.empty() ? batch.seq_lens[b][i] : batch.seq_lens_padded[b][i];
        for (std::int64_t j = 0; j < span; ++j) doc[at++] = static_cast<std::int64_t>(i) + 1;
      }
    }
    for (std::int64_t t = 0; t + depth < seq; ++t) {
      const auto label = static_cast<std::int64_t>(in.labels.get(b * seq + t + depth));
      const bool same_doc = !batch.packed() || (doc[t] != 0 && doc[t] == doc[t + depth]);
      if (in.valid.get(b * seq + t) == 0.0 || !same_doc || label == -100) continue;
      total += cross_entropy(in.logits, b * seq + t, vocab, label);
      ++count;
    }
  }
  return count ? total / static_cast<double>(count) : 0.0;
}

TEST(ShiftedLoss, EqualsTheUnshardedShiftedMean) {
  // The last two as a caller pads them where the padding is the caller's (2C up to 8).
  const std::vector<Batch> batches{bshd_batch(2, 13), packed_batch({{5, 4, 3}}, 14, {{6, 4, 3}}),
                                   bshd_batch(1, 24),
                                   packed_batch({{5, 4, 3}}, 72, {{24, 24, 24}})};
  for (const Batch& batch : batches) {
    CallerInputs in = random_inputs(batch.rows(), batch.seq_len(), 6, 7);
    if (batch.packed()) {
      // As callers do: no label and no loss on the caller's padding (thd re-lays that padding),
      // inside documents and after the last.
      std::int64_t start = 0;
      for (std::size_t i = 0; i <= batch.seq_lens[0].size(); ++i) {
        const bool row_end = i == batch.seq_lens[0].size();
        const std::int64_t real = row_end ? 0 : batch.seq_lens[0][i];
        const std::int64_t slots = row_end ? batch.seq_len() - start : batch.seq_lens_padded[0][i];
        for (std::int64_t s = start + real; s < start + slots; ++s) {
          in.labels.set(s, -100.0);
          in.valid.set(s, 0);
        }
        start += slots;
      }
    }
    for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 4})) {
      // Depth 1 is the next-token loss; depths 2-4 the MTP heads' (SPEC §6.1): documents of 3
      // tokens and chunks of 1 at C = 4 put depth-4 targets past document ends and ranks away.
      for (std::int64_t depth = 1; depth <= 4; ++depth) {
        if (!sim::accepts(make_spec(layout, cp), batch)) continue;
        SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp << " depth=" << depth
                                          << " packed=" << batch.packed());
        const double expected = hf_shifted_mean(batch, in, 6, depth);
        const ShardPlan plan = reference::plan(make_spec(layout, cp), batch);
        const auto loss = shifted_loss_caller(plan, in.logits, in.labels, in.valid, depth);
        EXPECT_NEAR(loss.global_mean, expected, 1e-9);
        double mean_of_ranks = 0.0;
        for (double share : loss.rank_loss) mean_of_ranks += share / static_cast<double>(cp);
        EXPECT_NEAR(mean_of_ranks, expected, 1e-9);
        EXPECT_EQ(sum(loss.rank_contributing), loss.contributing_total);
      }
    }
  }
}

// DeepSeek-V3's combination: the main loss plus λ/(D−1) times the sum of the D−1 MTP depths.
TEST(ShiftedLoss, DepthsCombineAsTheMainLossPlusTheWeightedMtpMean) {
  const reference::MtpCombination three = reference::combine_depths({2.0, 3.0, 5.0}, 0.3);
  EXPECT_DOUBLE_EQ(three.weight, 0.15);
  EXPECT_DOUBLE_EQ(three.mtp, 0.15 * 8.0);
  EXPECT_DOUBLE_EQ(three.total, 2.0 + 0.15 * 8.0);
  const reference::MtpCombination one = reference::combine_depths({2.5}, 0.3);
  EXPECT_EQ(one.weight, 0.0);
  EXPECT_EQ(one.total, 2.5);
  EXPECT_ERROR(reference::combine_depths({}, 0.1), "depth 1's loss");
}

TEST(ShiftedLoss, GradientMatchesFiniteDifferences) {
  const Batch batch = packed_batch({{4, 3}}, 8);
  for (const auto& [layout, cp] : testsupport::layouts_at({2})) {
    if (!sim::accepts(make_spec(layout, cp), batch)) continue;
    SCOPED_TRACE(layout);
    const ShardPlan plan = reference::plan(make_spec(layout, cp), batch);
    const std::int64_t vocab = 4, len = plan.rows[0].padded_len;
    CallerInputs in = random_inputs(1, len, vocab, 11);
    for (std::int64_t g = 0; g < len; ++g) in.valid.set(g, 1);
    const auto loss = shifted_loss(plan, in.logits, in.labels, in.valid);
    ASSERT_GT(loss.contributing_total, 2);
    const double h = 1e-2;
    for (std::int64_t g = 0; g < len; ++g) {
      const Ints& rank0 = plan.rows[0].index[0];
      const std::int64_t owner = std::find(rank0.begin(), rank0.end(), g) != rank0.end() ? 0 : 1;
      for (std::int64_t v = 0; v < vocab; ++v) {
        const std::int64_t at = g * vocab + v;
        Tensor up = in.logits, down = in.logits;
        up.set(at, in.logits.get(at) + h);
        down.set(at, in.logits.get(at) - h);
        const auto plus = shifted_loss(plan, up, in.labels, in.valid);
        const auto minus = shifted_loss(plan, down, in.labels, in.valid);
        const double grad = loss.grad_global.get(at);
        EXPECT_NEAR((plus.global_mean - minus.global_mean) / (2 * h), grad, 2e-4)
            << "g=" << g << " v=" << v;
        EXPECT_EQ(grad == 0.0, !loss.contributes[0][g]) << "g=" << g;
        for (std::int64_t r = 0; r < 2; ++r) {
          const double want = r == owner ? 2.0 * grad : 0.0;  // C · ∂(mean) on the owner, 0 else
          EXPECT_NEAR((plus.rank_loss[r] - minus.rank_loss[r]) / (2 * h), want, 4e-4)
              << "r=" << r << " g=" << g;
        }
      }
    }
  }
}

// The loss machinery, whatever the layout: a plain one, its L from its plan.
TEST(ShiftedLoss, NothingContributes) {
  const Batch batch = bshd_batch(1, 8);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const std::int64_t len = plan.rows[0].padded_len;
  CallerInputs in = random_inputs(1, len, 3, 5);
  for (std::int64_t g = 0; g < len; ++g) in.valid.set(g, 0);
  const auto loss = shifted_loss(plan, in.logits, in.labels, in.valid);
  EXPECT_EQ(loss.contributing_total, 0);
  EXPECT_EQ(loss.global_mean, 0.0);
  EXPECT_EQ(loss.rank_loss, (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(loss.grad_global, Tensor(DType::f32, {1, len, 3}));
}

TEST(ShiftedLoss, Bf16LogitsAreReadAsFloat) {
  const Batch batch = bshd_batch(1, 8);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const CallerInputs in = random_inputs(1, plan.rows[0].padded_len, 5, 3);
  const Tensor rounded = in.logits.to(DType::bf16);
  const auto from_bf16 = shifted_loss(plan, rounded, in.labels, in.valid);
  const auto from_f32 = shifted_loss(plan, rounded.to(DType::f32), in.labels, in.valid);
  EXPECT_EQ(from_bf16.global_mean, from_f32.global_mean);
  EXPECT_EQ(from_bf16.grad_global, from_f32.grad_global);
}

TEST(ShiftedLoss, RefusesBadInputs) {
  const Batch batch = bshd_batch(1, 8);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const std::int64_t len = plan.rows[0].padded_len;
  const std::string logits_shape = "[1, " + std::to_string(len) + ", V]";
  CallerInputs in = random_inputs(1, len, 3, 5);
  for (std::int64_t g = 0; g < len; ++g) in.valid.set(g, 1);
  in.labels.set(4, 9.0);  // slot 4 of a BSHD row is caller token 4: slot 3's target
  EXPECT_ERROR(shifted_loss(plan, in.logits, in.labels, in.valid), "slot 3", "label 9", "[0, 3)");
  EXPECT_ERROR(shifted_loss(plan, Tensor(DType::f32, {1, len - 1, 3}), in.labels, in.valid),
               logits_shape.c_str());
  EXPECT_ERROR(shifted_loss(plan, Tensor(DType::i64, {1, len, 3}), in.labels, in.valid),
               "f32, bf16 or f16");
  EXPECT_ERROR(shifted_loss_caller(plan, in.logits, Tensor(DType::i64, {1, 9}), in.valid), "labels",
               "[1, 8]");
  in.labels.set(4, 1.0);
  EXPECT_ERROR(shifted_loss(plan, in.logits, in.labels, in.valid, 0), "depth", "at least 1");
}

}  // namespace
}  // namespace cplab::testing
