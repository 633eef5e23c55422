#pragma once
// CP attention by a Ulysses schedule (SPEC §13, §10.5) on the device (internal; the gpu
// implementation's cp_attention calls it once the inputs are checked).
#include <vector>

#include "gpu/impl/rank_context.hpp"
#include "implementation/implementation.hpp"

namespace cplab::gpu {

// The head all-to-all of `impl` (the gpu implementation's own verb) brings every rank the whole
// sequence on its head group; the one step runs there; the output, LSE and dQ go back by the
// inverse all-to-all, and dK/dV, which ranks sharing a repeated KV head must add, by a sum over
// the group of every KV head's accumulator.
CpAttentionOutput cp_attention_ulysses(Implementation& impl, Comm& comm, RankContext& ctx,
                                       const ShardLayout& layout,
                                       const std::vector<sim::AttentionSchedule>& rows,
                                       const Tensor& q, const Tensor& k, const Tensor& v,
                                       const Tensor& grad_out);

}  // namespace cplab::gpu
