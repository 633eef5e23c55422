#pragma once
// The shifted cross-boundary loss of SPEC §6, computed on the unsharded batch (Eigen, fp32 inputs,
// double accumulation), and what every rank's share must be.
#include <vector>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"
#include "reference/token_shift.hpp"

namespace cplab::reference {

struct LossReference {
  double global_mean = 0.0;  // HF shifted CE mean over contributing tokens (0 when N = 0)
  std::int64_t contributing_total = 0;  // N
  // Per row, per global slot g (length L): target label (-1: none), whether g contributes, its CE.
  std::vector<std::vector<std::int64_t>> target;
  std::vector<std::vector<std::uint8_t>> contributes;
  std::vector<std::vector<double>> token_ce;
  Tensor grad_global;  // [B,L,V] f32: ∂(global mean)/∂logits (0 where nothing contributes)
  std::vector<double> rank_loss;                // [C]: loss_r
  std::vector<std::int64_t> rank_contributing;  // [C]
};

// logits [B,L,V], labels [B,L] (unshifted), valid [B,L] (bool/u8), all on the padded global stream.
// `depth` k ≥ 1 (SPEC §6.1): slot g predicts the label at g + k in the same document; depth 1 is
// the next-token loss.
LossReference shifted_loss(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                           const Tensor& valid, std::int64_t depth = 1);
// The same on caller coordinates: logits [B,S,V], labels [B,S], valid [B,S]; the plan pads them.
LossReference shifted_loss_caller(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                                  const Tensor& valid, std::int64_t depth = 1);

// The multi-token prediction loss of SPEC §6.1 over depths 1..D (one LossReference each, depth 1's
// first): the main loss L₁ plus λ/(D−1) · Σ_{k=2..D} L_k, each L_k normalised by its own count N_k.
// The same combination holds for the global means and, term by term, for every rank's loss_r.
struct MtpCombination {
  double total = 0.0;   // L₁ + λ/(D−1) Σ L_k
  double mtp = 0.0;     // λ/(D−1) Σ_{k≥2} L_k (0 when D = 1)
  double weight = 0.0;  // λ/(D−1): the weight of each depth k ≥ 2 (0 when D = 1)
};
MtpCombination combine_depths(const std::vector<double>& depth_losses, double scaling_factor);

}  // namespace cplab::reference
