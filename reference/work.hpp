#pragma once
// Causal work per rank (SPEC §8): Σ over a rank's real queries of the real keys they may see,
// under the causal mask or another one (SPEC §13.5).
#include <vector>

#include "core/attention_mask.hpp"
#include "core/shard_plan.hpp"

namespace cplab::reference {

// For every slot g of the row (length L): how many real keys h <= g of g's document it sees,
// counted key by key; 0 for pad slots (they attend nothing). Causal work and magi's chunk areas sum
// it. Under another mask, the keys of g's document the mask lets g see.
std::vector<std::int64_t> visible_keys(const RowPlan& row, const sim::AttentionMask& mask = {});
std::vector<std::int64_t> causal_work(const RowPlan& row, const sim::AttentionMask& mask = {});
double imbalance(const std::vector<std::int64_t>& work);  // max / mean (1 when all zero)

}  // namespace cplab::reference
