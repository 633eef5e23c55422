#pragma once
// An implementation under test's shifted CP loss (SPEC §6, §6.1) on a whole batch from outside the
// generators (`cplab loss` reads one from .npy files): C ranks as threads, each sharding the batch
// and one depth's logits with the implementation's own verbs and returning what its loss returns.
// check/loss_check.hpp says how far that is from the reference.
#include <cstdint>
#include <vector>

#include "core/batch.hpp"
#include "core/layout_spec.hpp"
#include "implementation/implementation.hpp"

namespace cplab::properties {

// Rank r's LossOutput at depth `depth` for logits [B, S, V] f32 in caller coordinates, [r].
std::vector<LossOutput> run_rank_losses(Implementation& impl, const LayoutSpec& spec,
                                        const Batch& batch, const Tensor& logits,
                                        std::int64_t depth);

}  // namespace cplab::properties
