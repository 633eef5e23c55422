#pragma once
// Continued position ids (SPEC §2) in closed form per local token, so the device fills them
// without a sequential scan: an added slot g holds value(p) + (g - p), with p the last caller slot
// before g, and g itself when there is none (the stream starts at 0 and counts on).
#include <cstdint>
#include <vector>

namespace cplab::gpu {

inline constexpr std::int64_t kNotPadded = -2;  // the local token is a caller token

struct PadAnchors {
  std::vector<std::int64_t>
      anchor;  // [ℓ]: caller position of p; -1: no caller slot before g; kNotPadded
  std::vector<std::int64_t> delta;  // [ℓ]: g - p, or g
};

// stream_caller_pos: [L] caller position of every stream slot (-1: added); local_index: [ℓ] slots.
PadAnchors continue_anchors(const std::vector<std::int64_t>& stream_caller_pos,
                            const std::vector<std::int64_t>& local_index);

}  // namespace cplab::gpu
