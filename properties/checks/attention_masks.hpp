#pragma once
// The masks the attention properties draw (SPEC §13.5), a pure function of a case's seed: each
// family about as often, with window and chunk sizes around what breaks CP code (1, the shard
// length and its neighbours, a document's length, the whole row) and bidirectional spans laid
// across shard boundaries.
#include <cstdint>

#include "core/attention_mask.hpp"
#include "properties/case.hpp"
#include "properties/mask_choice.hpp"

namespace cplab::properties {

// A case that carries a sweep's choice (Case::mask) gets that mask, or that family with its size
// drawn as above. `local_len`: the shard length ℓ of the case's rows; `salt` tells one property's
// draw from another's.
sim::AttentionMask draw_mask(const Case& c, std::int64_t local_len, std::uint64_t salt);

}  // namespace cplab::properties
