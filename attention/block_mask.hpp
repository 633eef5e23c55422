#pragma once
// Which (query, key) pairs of one schedule block are computed, as a kernel realises the block's
// mask (SPEC §13.2). One function, host and device: the twin, the CUDA kernels, the schedule's
// pair counts and its coverage property all ask it, so a mask the property proves is the mask the
// kernels run. A per-token block asks the row's mask itself (core/mask_rule.hpp).
#include <cstdint>

#include "core/mask_rule.hpp"

namespace cplab::sim {

// Mask kinds as plain integers for kernels (MaskKind's values, schedule.hpp).
inline constexpr int kMaskFull = 0, kMaskCausal = 1, kMaskDocCausal = 2, kMaskSkip = 3;

// Query i and key j (local to the block) under `mask`; `diagonal` is a causal block's shift;
// `q`, `k` are the tokens' facts and `rule` the row's mask (read by per-token blocks only).
CPLAB_HD constexpr bool block_pair_visible(int mask, std::int64_t diagonal, std::int64_t i,
                                           std::int64_t j, const TokenFacts& q, const TokenFacts& k,
                                           const MaskRule& rule) {
  switch (mask) {
    case kMaskFull:
      return true;
    case kMaskCausal:
      return j <= i + diagonal;
    case kMaskDocCausal:
      return mask_visible(rule, q, k);
    default:
      return false;
  }
}

}  // namespace cplab::sim
