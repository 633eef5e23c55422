#include "core/mask_ranges.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace cplab::sim {

VisibleRanges visible_ranges(const std::vector<TokenFacts>& facts, const MaskRule& rule) {
  // A span's last position in each document it reaches, for its tokens' ranges.
  std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t> span_last;  // (doc, span)
  if (rule.family == MaskFamily::bidirectional) {
    for (const TokenFacts& t : facts) {
      if (t.real != 0 && t.span != 0) {
        std::int64_t& last = span_last[{t.doc, t.span}];
        last = std::max(last, t.pos);
      }
    }
  }
  VisibleRanges out{std::vector<std::int64_t>(facts.size(), 0),
                    std::vector<std::int64_t>(facts.size(), -1)};
  for (std::size_t g = 0; g < facts.size(); ++g) {
    const TokenFacts& t = facts[g];
    if (t.real == 0) continue;
    std::int64_t lo = 0, hi = t.pos;
    if (rule.family == MaskFamily::window) lo = std::max<std::int64_t>(0, t.pos - rule.size + 1);
    if (rule.family == MaskFamily::chunked) lo = t.pos - t.pos % rule.size;
    if (rule.family == MaskFamily::bidirectional && t.span != 0)
      hi = std::max(hi, span_last[{t.doc, t.span}]);
    out.lo[g] = lo;
    out.hi[g] = hi;
  }
  return out;
}

}  // namespace cplab::sim
