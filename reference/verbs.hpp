#pragma once
// Global shard and gather (SPEC §5): what every rank must end up holding, computed from the whole
// batch in one place.
#include <optional>

#include "core/batch.hpp"
#include "core/shard_plan.hpp"

namespace cplab::reference {

// The padded global stream of one token-aligned tensor: caller rows [.., S, ..] placed at their
// slots in [.., L, ..], added slots filled per the field's pad rule (and the spec's pad policy).
Tensor pad_to_global(const ShardPlan& plan, const TokenField& field);
// Rank r's shard of a global-length tensor (seq dim L): local[k] = global[idx_r[k]], per row.
Tensor select_rank(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim,
                   std::int64_t rank);
// The inverse: the C local shards, in rank order, put back at their global slots.
Tensor place_ranks(const ShardPlan& plan, const std::vector<Tensor>& locals, std::int64_t seq_dim);
// Caller coordinates of a global-length tensor (first S tokens of BSHD rows, the caller's packed
// rows).
Tensor trim_to_caller(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim);

// sharded[m][r]: the local batch rank r holds for microbatch m (SPEC §4/§5): every token key
// sharded, position_ids added when absent (computed before partitioning), pass-through unchanged,
// the primary left global when shard_primary is false.
std::vector<std::vector<Batch>> shard_batch(const ShardPlan& plan, const Batch& batch);

// shard_token_tensor of SPEC §5 for rank r: accepts the padded length L, the caller length S with
// an explicit fill, or THD rows; anything else is an error naming both lengths.
Tensor shard_token_tensor(const ShardPlan& plan, const Tensor& value, std::int64_t seq_dim,
                          std::optional<double> fill, std::int64_t rank);
// gather_token_tensor of SPEC §5: local shards in rank order → global (trim: caller coordinates).
Tensor gather_token_tensor(const ShardPlan& plan, const std::vector<Tensor>& locals,
                           std::int64_t seq_dim, bool trim);
// Its backward for rank r: a loss replicated on all ranks gives C× the gradient on owned slots and
// 0 on padding (grad_gathered is what each rank saw; identical on every rank).
Tensor gather_token_tensor_backward(const ShardPlan& plan, const Tensor& grad_gathered,
                                    std::int64_t seq_dim, bool trim, std::int64_t rank);

}  // namespace cplab::reference
