#include "gpu/host/pad_anchors.hpp"

#include "core/error.hpp"

namespace cplab::gpu {

PadAnchors continue_anchors(const std::vector<std::int64_t>& stream_caller_pos,
                            const std::vector<std::int64_t>& local_index) {
  const auto len = static_cast<std::int64_t>(stream_caller_pos.size());
  // last[g]: the last caller slot at or before g, -1 when none.
  std::vector<std::int64_t> last(stream_caller_pos.size(), -1);
  for (std::int64_t g = 0; g < len; ++g)
    last[g] = stream_caller_pos[g] >= 0 ? g : (g > 0 ? last[g - 1] : -1);
  PadAnchors out;
  for (std::int64_t g : local_index) {
    CPLAB_CHECK(g >= 0 && g < len, "continue_anchors: local slot {} outside the stream of L={}", g,
                len);
    if (stream_caller_pos[g] >= 0) {
      out.anchor.push_back(kNotPadded);
      out.delta.push_back(0);
      continue;
    }
    const std::int64_t p = g > 0 ? last[g - 1] : -1;
    out.anchor.push_back(p >= 0 ? stream_caller_pos[p] : -1);
    out.delta.push_back(p >= 0 ? g - p : g);
  }
  return out;
}

}  // namespace cplab::gpu
