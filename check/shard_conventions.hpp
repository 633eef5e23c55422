#pragma once
// Conventions a sharder follows that are read off its shards before they are compared with the
// reference (shard_check.cpp): the pad id its added slots hold, and the masks it adds that the
// batch file may lack.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/shard_plan.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::check {

// The pad id most of the slots the layout added hold in the shards' input_ids.
std::optional<std::int64_t> read_pad_id(const ShardPlan& plan,
                                        const std::vector<io::TensorFile>& shards);

// Masks a sharder adds that the batch file may lack: derived from the batch's own rows (real
// tokens: every BSHD slot, the first seq_lens[i] slots of each packed document, or where the
// batch's attention_mask is set), so the shards' copies can be checked. padding_mask is true on
// padding; loss_mask and valid on real tokens. A sharder that hands its ranks a padding_mask in
// place of the batch's attention_mask (Automodel: `padding_mask = ~attention_mask`, the attention
// mask popped before the cut) follows a convention: the ranks' padding_mask is checked against the
// attention mask, which they need not hold.
Batch with_derived_masks(const Batch& batch, const std::vector<io::TensorFile>& shards,
                         std::vector<std::string>& notes, bool& padding_for_attention);

}  // namespace cplab::check
