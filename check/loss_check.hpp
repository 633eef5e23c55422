#pragma once
// What the ranks of a CP loss must return, and how far what they returned is from it (SPEC §6,
// §6.1): rank r's loss at depth k is the sum of its tokens' cross-entropy × C / N_k, their mean
// over the ranks is the global mean, and its gradient on its logits shard is C × the global mean's
// gradient at the slots it holds; the MTP loss combines the depths term by term. One engine for
// `cplab loss` (an implementation under test on a batch from a training run) and
// cplab.testing.check_loss (a user's loss on generated cases).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"
#include "reference/loss.hpp"

namespace cplab::check {

// The first element of a rank's gradient past the tolerance: its row, local slot, the global slot
// the plan gives that local slot, the logit, and the two values.
struct GradMismatch {
  std::int64_t row = 0, slot = 0, global_slot = 0, logit = 0;
  double got = 0.0, want = 0.0;
};

struct GradDifference {
  double max_abs_error = 0.0;  // +inf when an element is not finite
  std::optional<GradMismatch> first;
};

class LossExpectation {
 public:
  // `depth_logits`: one [B, S, V] per depth, depth 1's first, in caller coordinates (the plan
  // pads them); labels [B, S] unshifted, valid [B, S].
  LossExpectation(const ShardPlan& plan, const std::vector<Tensor>& depth_logits,
                  const Tensor& labels, const Tensor& valid);
  // One depth at a time, so that only the depth being compared holds its [B, L, V] gradient (a
  // real vocabulary makes each one as large as the logits): add_depth builds depth depths() + 1,
  // and release_gradient drops a compared depth's gradient while its losses stay for the MTP
  // combination.
  LossExpectation() = default;
  void add_depth(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                 const Tensor& valid);
  void release_gradient(std::int64_t depth);

  std::int64_t depths() const { return static_cast<std::int64_t>(depths_.size()); }
  std::int64_t cp() const;
  // The reference's loss at `depth` (1..depths()).
  const reference::LossReference& at(std::int64_t depth) const;

  // Each depth's global mean, and their MTP combination L₁ + λ/(D−1)·Σ L_k.
  std::vector<double> global_means() const;
  reference::MtpCombination global_total(double scaling_factor) const;
  // The weight of depth k's term in the combination: 1 for depth 1, λ/(D−1) for the others.
  double depth_weight(std::int64_t depth, double scaling_factor) const;
  // What rank r's combined loss must be: Σ_k weight_k × its share at depth k.
  double rank_total(std::int64_t rank, double scaling_factor) const;

  // Rank r's gradient on depth `depth`'s logits shard ([B, ℓ, V], flat) against weight × C ×
  // ∂(global mean)/∂logits at the slots its map in `plan` (the plan the expectation was made
  // with) gives it: the largest difference, and the first element past `tolerance` (none when
  // every element is within it).
  GradDifference grad_difference(const ShardPlan& plan, std::int64_t rank, std::int64_t depth,
                                 std::span<const float> grad, double weight,
                                 double tolerance) const;

 private:
  std::vector<reference::LossReference> depths_;
};

// Whether a loss is within the relative tolerance of what it should be (NaN never is).
bool loss_matches(double got, double want, double tolerance);

}  // namespace cplab::check
