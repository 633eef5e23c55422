#pragma once
// The shifted cross-boundary loss of SPEC §6, computed on the unsharded batch (Eigen, fp32 inputs,
// double accumulation), and what every rank's share must be.
#include <vector>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"

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
LossReference shifted_loss(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                           const Tensor& valid);
// The same on caller coordinates: logits [B,S,V], labels [B,S], valid [B,S]; the plan pads them.
LossReference shifted_loss_caller(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                                  const Tensor& valid);

}  // namespace cplab::reference
