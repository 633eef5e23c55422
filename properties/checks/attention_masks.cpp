#include "properties/checks/attention_masks.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "properties/case_data.hpp"
#include "properties/mask_choice.hpp"

namespace cplab::properties {

sim::AttentionMask draw_mask(const Case& c, std::int64_t local_len, std::uint64_t salt) {
  const auto draw = [&](std::uint64_t a, std::uint64_t b) {
    return mix(c.seed, 0x3a5c, salt, a * 64 + b);
  };
  sim::AttentionMask mask;
  std::optional<sim::MaskFamily> chosen;
  if (!c.mask.empty()) {
    const MaskChoice choice = parse_mask_choice(c.mask);
    if (choice.fixed) return *choice.fixed;
    chosen = choice.family;
  }
  // Packed rows draw the window more often (3 in 8): its reset at each document's start is what
  // breaks there, and causal packed rows are drawn by every other property already.
  constexpr sim::MaskFamily kPacked[8] = {
      sim::MaskFamily::causal,        sim::MaskFamily::window,       sim::MaskFamily::window,
      sim::MaskFamily::window,        sim::MaskFamily::chunked,      sim::MaskFamily::chunked,
      sim::MaskFamily::bidirectional, sim::MaskFamily::bidirectional};
  mask.family = chosen       ? *chosen
                : c.packed() ? kPacked[draw(0, 0) % 8]
                             : static_cast<sim::MaskFamily>(draw(0, 0) % 4);
  const std::int64_t len = std::max<std::int64_t>(1, local_len),
                     row = std::max<std::int64_t>(1, c.seq_len);
  if (mask.family == sim::MaskFamily::window || mask.family == sim::MaskFamily::chunked) {
    std::vector<std::int64_t> sizes = {1, 2, len - 1, len, len + 1, 2 * len, row};
    if (c.packed()) {
      const std::vector<Document>& docs = c.docs.front();
      if (!docs.empty()) {
        const std::int64_t doc = docs[draw(1, 0) % docs.size()].real;
        sizes.insert(sizes.end(), {doc - 1, doc, doc + 1});
      }
    }
    sizes.push_back(1 + static_cast<std::int64_t>(draw(1, 1) % static_cast<std::uint64_t>(row)));
    const std::int64_t size = sizes[draw(1, 2) % sizes.size()];
    mask.size = std::max<std::int64_t>(1, size);
    return mask;
  }
  if (mask.family != sim::MaskFamily::bidirectional) return mask;
  // One to three spans, each about a shard boundary or anywhere, up to a shard long each way.
  const std::uint64_t spans = 1 + draw(2, 0) % 3;
  std::vector<sim::CallerSpan> drawn;
  for (std::uint64_t i = 0; i < spans; ++i) {
    const std::uint64_t r = draw(3, i);
    const std::int64_t boundary =
        len * static_cast<std::int64_t>(
                  r % static_cast<std::uint64_t>(std::max<std::int64_t>(1, row / len + 1)));
    const std::int64_t center =
        (r >> 20) % 3 == 0 ? static_cast<std::int64_t>((r >> 24) % static_cast<std::uint64_t>(row))
                           : boundary;
    const std::int64_t before =
        static_cast<std::int64_t>((r >> 32) % static_cast<std::uint64_t>(len + 1));
    const std::int64_t after =
        1 + static_cast<std::int64_t>((r >> 44) % static_cast<std::uint64_t>(len + 1));
    const std::int64_t begin = std::clamp<std::int64_t>(center - before, 0, row - 1);
    const std::int64_t end = std::clamp<std::int64_t>(center + after, begin + 1, row);
    drawn.push_back({begin, end});
  }
  std::sort(drawn.begin(), drawn.end(),
            [](const auto& a, const auto& b) { return a.begin < b.begin; });
  for (const sim::CallerSpan& span : drawn) {
    if (!mask.spans.empty() && span.begin < mask.spans.back().end) {
      mask.spans.back().end = std::max(mask.spans.back().end, span.end);  // overlapping: one span
    } else {
      mask.spans.push_back(span);
    }
  }
  return mask;
}

}  // namespace cplab::properties
