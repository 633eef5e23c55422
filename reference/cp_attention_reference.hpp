#pragma once
// Unsharded multi-head attention (SPEC §7, §13.3) on the padded global stream under the row's
// mask (document-causal by default; SPEC §13.5), forward and backward, in double: what CP
// attention by any schedule must reproduce. Query head h reads KV head ⌊h·H_kv/H⌋ (GQA); query g
// sees key j when mask_visible says so (both real, in one document, and the mask's rule on their
// positions); softmax scale 1/sqrt(d). A query that sees nothing outputs 0 with LSE -inf.
#include <cstdint>
#include <vector>

#include "core/attention_mask.hpp"
#include "core/shard_plan.hpp"
#include "core/tensor.hpp"

namespace cplab::reference {

struct CpAttentionReference {
  std::int64_t rows = 0, len = 0, heads = 0, kv_heads = 0, d = 0;
  std::vector<double> out;     // [B, L, H, d]
  std::vector<double> lse;     // [B, L, H]
  std::vector<double> grad_q;  // [B, L, H, d]
  std::vector<double> grad_k;  // [B, L, H_kv, d]
  std::vector<double> grad_v;  // [B, L, H_kv, d]
  // [B, L, H_kv]: Σ of the attention probabilities that fall on each key (over every query and
  // every query head reading its KV head), the weight its gradients' errors scale with.
  std::vector<double> key_mass;
};

// q, grad_out [B, L, H, d], k, v [B, L, H_kv, d], any floating dtype (read exactly as doubles).
CpAttentionReference cp_attention_reference(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                                            const Tensor& v, const Tensor& grad_out,
                                            const sim::AttentionMask& mask = {});

}  // namespace cplab::reference
