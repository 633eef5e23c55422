// The standard steps of SimImplementation's CP attention, which sim_cp_attention.cpp runs: the
// protected virtuals through which a mutant changes one step (the softmax scale, the accumulation
// dtype, whether a block is computed, the block and mask applied, a buffer's token facts, a
// block's key range, the merge, the KV a backward step recomputes against, the backward ring's
// direction, the dK/dV delivery step), here as the twin runs them unbroken.
#include <cmath>

#include "core/error.hpp"
#include "sim/attention/block_attention.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {

float SimImplementation::softmax_scale(std::int64_t head_dim) const {
  return head_dim > 0 ? 1.0f / std::sqrt(static_cast<float>(head_dim)) : 1.0f;
}

DType SimImplementation::attention_accumulation_dtype(DType /*input*/) const { return DType::f32; }

bool SimImplementation::block_computed(const AttentionSchedule& /*schedule*/,
                                       const RankStep& /*step*/, std::size_t /*block*/) const {
  return true;
}

ScheduleBlock SimImplementation::applied_block(const ScheduleBlock& block) const { return block; }

MaskRule SimImplementation::applied_mask(const AttentionSchedule& schedule,
                                         std::size_t /*step*/) const {
  return schedule.mask.rule();
}

std::vector<TokenFacts> SimImplementation::buffer_facts(const AttentionSchedule& schedule,
                                                        std::int64_t /*rank*/, std::size_t /*step*/,
                                                        const std::vector<BufferPiece>& pieces,
                                                        bool /*keys*/) const {
  std::vector<TokenFacts> facts;
  for (const std::int64_t slot : schedule.buffer_slots(pieces)) {
    CPLAB_CHECK(slot >= 0 && slot < schedule.padded_len,
                "cp_attention: a buffer position is slot {}, outside [0, {})", slot,
                schedule.padded_len);
    facts.push_back(schedule.facts[static_cast<std::size_t>(slot)]);
  }
  return facts;
}

LocalRange SimImplementation::block_key_range(const RankStep& /*step*/, const ScheduleBlock& block,
                                              std::int64_t /*key_tokens*/) const {
  return block.k;
}

void SimImplementation::merge_block_row(float* out, float& lse, const float* out_b, float lse_b,
                                        std::int64_t d) const {
  merge_row(out, lse, out_b, lse_b, d);
}

const HeldKv& SimImplementation::backward_step_kv(const HeldKv& held, const HeldKv& /*first*/,
                                                  std::int64_t /*step*/) const {
  return held;
}

int SimImplementation::backward_ring_shift() const { return 1; }

std::int64_t SimImplementation::dkv_delivery_step(std::int64_t steps) const { return steps - 1; }

}  // namespace cplab::sim
