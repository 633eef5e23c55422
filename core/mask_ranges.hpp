#pragma once
// The positions each query of a row may see under a mask (SPEC §13.5), as one range per slot: the
// schedule's exact pair counts and the work a layout gives each rank both read it.
#include <cstdint>
#include <vector>

#include "core/mask_rule.hpp"

namespace cplab::sim {

// For every slot g (a real token at position p of its document): the positions [lo[g], hi[g]] of
// its document it sees, every one of them a real key there. Causal [0, p]; window [max(0,
// p − W + 1), p]; chunked [p − p mod K, p]; a bidirectional span's token [0, its span's last
// position in the document]. Pad slots get [0, -1].
struct VisibleRanges {
  std::vector<std::int64_t> lo, hi;
};
VisibleRanges visible_ranges(const std::vector<TokenFacts>& facts, const MaskRule& rule);

}  // namespace cplab::sim
