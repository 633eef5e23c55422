#pragma once
// Causal work per rank (SPEC §8): Σ over a rank's real queries of the real keys they may see.
#include <vector>

#include "core/shard_plan.hpp"

namespace cplab::reference {

// For every slot g of the row (length L): how many real keys h <= g of g's document it sees,
// counted key by key; 0 for pad slots (they attend nothing). Causal work and magi's chunk areas sum
// it.
std::vector<std::int64_t> visible_keys(const RowPlan& row);
std::vector<std::int64_t> causal_work(const RowPlan& row);
double imbalance(const std::vector<std::int64_t>& work);  // max / mean (1 when all zero)

}  // namespace cplab::reference
