#pragma once
// The lengths every row of a plan shares. Token tensors are rectangular ([B, S] in, [B, L] global,
// [B, ℓ] per rank), so the verbs read them once and refuse a plan whose rows disagree.
#include <cstdint>

#include "core/shard_plan.hpp"

namespace cplab::reference {

struct PlanLengths {
  std::int64_t rows;    // B
  std::int64_t caller;  // S
  std::int64_t padded;  // L
  std::int64_t cp;      // C
};

PlanLengths plan_lengths(const ShardPlan& plan);

}  // namespace cplab::reference
