#pragma once
// The Ulysses head all-to-all (SPEC §10.5) by construction, from the global view: the unsharded
// [B, L, H, d] tensor, its KV heads repeated up to U when fewer, cut into U contiguous head groups.
// And multi-head (GQA) attention over the unsharded stream, one reference attention per head.
#include <cstdint>
#include <vector>

#include "reference/types/shard_plan.hpp"
#include "reference/types/tensor.hpp"
#include "reference/types/ulysses_heads.hpp"

namespace cplab::reference {

// The global heads (of `kind`) rank u of a group of U holds after the all-to-all, in order.
std::vector<std::int64_t> ulysses_head_group(const UlyssesHeads& heads, HeadKind kind,
                                             std::int64_t group, std::int64_t u);
// What rank u holds after the all-to-all: global [B, L, H, d] → [B, L, n, d], its head group.
Tensor ulysses_head_split(const Tensor& global, const UlyssesHeads& heads, HeadKind kind,
                          std::int64_t group, std::int64_t u);

// Heads [B, L, H, d] → the [B, L, d] of head h; and the inverse, writing [B, L, d] into head h.
Tensor head_slice(const Tensor& t, std::int64_t h);
void set_head(Tensor& t, std::int64_t h, const Tensor& slice);

// Attention (SPEC §7) of every query head h of q [B, L, H, d] f32 with KV head
// ⌊h·H_kv/H⌋ of k, v [B, L, H_kv, d]: the output [B, L, H, d].
Tensor multi_head_attention(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                            const Tensor& v);

}  // namespace cplab::reference
