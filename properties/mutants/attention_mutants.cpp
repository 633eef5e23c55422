// Mutants of CP attention by schedule (SPEC §13), each a bug that shipped in ring, zigzag or
// Ulysses attention code: one protected step of the twin's run changed, everything else standard.
#include <cmath>
#include <limits>
#include <set>

#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

// The backward recomputes every step against the K/V of step 0 instead of the K/V the step holds
// (diffusers 14265: the ring's backward reused the first step's key/value tensors).
class BackwardAgainstFirstKv final : public Mutant {
  using Mutant::Mutant;
  const sim::HeldKv& backward_step_kv(const sim::HeldKv& /*held*/, const sim::HeldKv& first,
                                      std::int64_t /*step*/) const override {
    return first;
  }
};

// An off-diagonal step launched with the causal kernel: a block the schedule computes in full is
// masked with diagonal 0 (`causal=True` passed for every step of a ring).
class CausalMaskOnFullBlock final : public Mutant {
  using Mutant::Mutant;
  sim::ScheduleBlock applied_block(const sim::ScheduleBlock& block) const override {
    sim::ScheduleBlock b = block;
    if (b.mask == sim::MaskKind::full) {
      b.mask = sim::MaskKind::causal;
      b.diagonal = 0;
    }
    return b;
  }
};

// The LSE merged as lse + log(1 + exp(lse_b - lse)): right for moderate logits, but exp overflows
// once a block's LSE exceeds the running one by ~89 (f32), and the output turns to 0 or NaN.
class LseMergeUnstable final : public Mutant {
  using Mutant::Mutant;
  void merge_block_row(float* out, float& lse, const float* out_b, float lse_b,
                       std::int64_t d) const override {
    if (lse_b == -std::numeric_limits<float>::infinity()) return;
    if (lse == -std::numeric_limits<float>::infinity()) {
      std::copy(out_b, out_b + d, out);
      lse = lse_b;
      return;
    }
    const float merged = lse + std::log(1.0f + std::exp(lse_b - lse));
    const float keep = std::exp(lse - merged), take = std::exp(lse_b - merged);
    for (std::int64_t e = 0; e < d; ++e) out[e] = out[e] * keep + out_b[e] * take;
    lse = merged;
  }
};

// dK/dV handed to their owners one step early: the last step's contributions never arrive.
class DkvDeliveredEarly final : public Mutant {
  using Mutant::Mutant;
  std::int64_t dkv_delivery_step(std::int64_t steps) const override {
    return std::max<std::int64_t>(0, steps - 2);
  }
};

// dK/dV handed to their owners one step late: the delivery is set for the step after the last,
// which the row never runs, so each owner's results are taken before its gradients arrive (a
// missing wait on the final dK/dV exchange) and its dK/dV are the zeros it started from.
class DkvDeliveredLate final : public Mutant {
  using Mutant::Mutant;
  std::int64_t dkv_delivery_step(std::int64_t steps) const override { return steps; }
};

// The running output kept in bf16 between merges (the merge done in the input's precision).
class OutAccumulatedInBf16 final : public Mutant {
  using Mutant::Mutant;
  DType attention_accumulation_dtype(DType /*input*/) const override { return DType::bf16; }
};

// The backward's ring turned the other way: K/V (and dK/dV) go to the previous rank while the
// forward sent them to the next.
class BackwardRingReversed final : public Mutant {
  using Mutant::Mutant;
  int backward_ring_shift() const override { return -1; }
};

// The softmax scale applied twice (once by the caller, once by the kernel): 1/d, not 1/sqrt(d).
class SoftmaxScaleTwice final : public Mutant {
  using Mutant::Mutant;
  float softmax_scale(std::int64_t head_dim) const override {
    return head_dim > 0 ? 1.0f / static_cast<float>(head_dim) : 1.0f;
  }
};

// A step's last block skipped where its blocks span a document boundary (a per-document loop
// over cu_seqlens stopping one document short).
class DocumentBoundaryBlockSkipped final : public Mutant {
  using Mutant::Mutant;
  bool block_computed(const sim::AttentionSchedule& s, const sim::RankStep& step,
                      std::size_t block) const override {
    if (block + 1 != step.blocks.size()) return true;
    std::set<std::int32_t> docs;
    for (const sim::ScheduleBlock& b : step.blocks) {
      const std::int64_t slot = s.slot_at(step.queries, b.q.begin);
      docs.insert(s.doc_ids[static_cast<std::size_t>(slot)]);
    }
    return docs.size() < 2;
  }
};

}  // namespace

std::vector<ImplementationInfo> attention_mutants() {
  auto matches = checked_first_by(
      "cp_attention_matches_unsharded",
      {
          on_claiming_layouts<BackwardAgainstFirstKv>(
              "attention_backward_against_first_kv",
              "ring backward recomputes every step against the step-0 K/V (diffusers 14265)"),
          on_claiming_layouts<CausalMaskOnFullBlock>(
              "attention_causal_mask_on_full_block",
              "an off-diagonal block computed in full launched with the causal mask, diagonal 0"),
          on_claiming_layouts<DkvDeliveredEarly>(
              "attention_dkv_delivered_early",
              "ring backward: dK/dV delivered to their owners one step early"),
          on_claiming_layouts<DkvDeliveredLate>(
              "attention_dkv_delivered_late",
              "ring backward: dK/dV delivered to their owners one step late"),
          entry<OutAccumulatedInBf16>("attention_out_accumulated_in_bf16",
                                      "the running attention output kept in bf16 between merges"),
          on_claiming_layouts<BackwardRingReversed>(
              "attention_backward_ring_reversed",
              "ring backward sends K/V and dK/dV to the previous rank (forward: the next)"),
          entry<SoftmaxScaleTwice>("attention_softmax_scale_twice",
                                   "softmax scale applied twice: 1/d instead of 1/sqrt(d)"),
          on_claiming_layouts<DocumentBoundaryBlockSkipped>(
              "attention_document_boundary_block_skipped",
              "a step's last block skipped where its blocks cross a document boundary"),
      });
  auto stable =
      checked_first_by("lse_merge_is_stable",
                       {on_claiming_layouts<LseMergeUnstable>(
                           "attention_lse_merge_unstable",
                           "LSE merged as lse + log(1 + exp(lse_b - lse)): overflows at large "
                           "logits")});
  matches.insert(matches.end(), stable.begin(), stable.end());
  return matches;
}

}  // namespace cplab::properties::mutants
