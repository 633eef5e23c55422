#pragma once
// Shifts by k slots along the global stream within documents (SPEC §6.1): the targets of the loss
// at depth k and the inputs of a multi-token prediction head of depth k.
#include <cstdint>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"

namespace cplab::reference {

// The slot `depth` positions ahead of global slot g in the same document, -1 when there is none:
// past the stream's end, or (packed rows) in another document or row padding.
std::int64_t target_slot(const RowPlan& row, std::int64_t g, std::int64_t depth);

// The padded global stream `global` ([..., B, L, ...]) shifted by `depth`: slot g holds the value
// at target_slot(g, depth) when that slot holds a caller token (not one the layout added), else
// `fill`, which must be a value of the dtype. select_rank of it is each rank's shift_token_tensor.
Tensor shift_global(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim,
                    std::int64_t depth, double fill);

}  // namespace cplab::reference
