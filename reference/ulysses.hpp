#pragma once
// The Ulysses head all-to-all (SPEC §10.5) by construction, from the global view: the unsharded
// [B, L, H, d] tensor, its KV heads repeated up to U when fewer, cut into U contiguous head groups.
#include <cstdint>
#include <vector>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"
#include "core/ulysses_heads.hpp"
#include "reference/attention.hpp"  // multi_head_attention, used with the split

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

}  // namespace cplab::reference
