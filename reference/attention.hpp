#pragma once
// Unsharded single-head attention under the document-causal mask (SPEC §7), forward and backward,
// in Eigen: the rows every rank's local computation must reproduce.
#include "core/shard_plan.hpp"
#include "core/tensor.hpp"

namespace cplab::reference {

struct AttentionReference {
  Tensor out, grad_q, grad_k, grad_v;  // [B,L,D] f32 on the padded global stream
};

// q, k, v, grad_out: [B,L,D] f32 on the padded global stream. Query g sees key h when both are
// real, in the same document and h <= g; a query that sees nothing outputs 0. Softmax scale
// 1/sqrt(D).
AttentionReference attention(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                             const Tensor& v, const Tensor& grad_out);

// Forward attention of every query head h of q [B, L, H, d] f32 with KV head ⌊h·H_kv/H⌋ of
// k, v [B, L, H_kv, d] (grouped-query attention): the output [B, L, H, d].
Tensor multi_head_attention(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                            const Tensor& v);

}  // namespace cplab::reference
