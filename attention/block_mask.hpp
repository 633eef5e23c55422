#pragma once
// Which (query, key) pairs of one schedule block are computed, as a kernel realises the block's
// mask (SPEC §13.2). One function, host and device: the twin, the CUDA kernels, the schedule's
// pair counts and its coverage property all ask it, so a mask the property proves is the mask the
// kernels run.
#include <cstdint>

#include "layouts/index_math.hpp"

namespace cplab::sim {

// The per-token facts a doc-causal block reads: global slot, document (0 = row padding), real.
struct TokenFacts {
  std::int64_t slot;
  std::int32_t doc;
  std::uint8_t real;
};

// Mask kinds as plain integers for kernels (MaskKind's values, schedule.hpp).
inline constexpr int kMaskFull = 0, kMaskCausal = 1, kMaskDocCausal = 2, kMaskSkip = 3;

// Query i and key j (local to the block) under `mask`; `diagonal` is a causal block's shift;
// `q`, `k` are the tokens' facts (read by doc-causal only).
CPLAB_HD constexpr bool block_pair_visible(int mask, std::int64_t diagonal, std::int64_t i,
                                           std::int64_t j, const TokenFacts& q,
                                           const TokenFacts& k) {
  switch (mask) {
    case kMaskFull:
      return true;
    case kMaskCausal:
      return j <= i + diagonal;
    case kMaskDocCausal:
      return q.real != 0 && k.real != 0 && q.doc == k.doc && k.slot <= q.slot;
    default:
      return false;
  }
}

}  // namespace cplab::sim
