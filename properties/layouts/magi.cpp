// magi (MagiAttention dispatch): chunks of K slots assigned greedily by attention area, n/C per
// rank, each rank's chunks ascending; the stream is padded to a multiple of K·C. Balance: the
// largest rank work is at most total/C + the largest chunk area.
#include <fmt/format.h>

#include <algorithm>

#include "properties/layout_table.hpp"

namespace cplab::properties {
namespace {

std::string area_bound(const BalanceFacts& f) {
  const std::int64_t cp = f.spec.cp;
  if (cp == 1) return {};
  const std::int64_t chunk = f.spec.chunk_size;
  std::int64_t max_area = 0;
  for (std::int64_t start = 0; start < f.row.padded_len; start += chunk) {
    std::int64_t area = 0;
    for (std::int64_t g = start; g < start + chunk; ++g)
      area += f.visible[static_cast<std::size_t>(g)];
    max_area = std::max(max_area, area);
  }
  // max <= total/C + max area, in integers: C·max <= total + C·max_area.
  if (cp * f.largest > f.total + cp * max_area) {
    return fmt::format("magi's largest rank work {} exceeds total/C + max chunk area = {}/{} + {}",
                       f.largest, f.total, cp, max_area);
  }
  return {};
}

}  // namespace

extern const LayoutEntry magi_entry;
const LayoutEntry magi_entry{
    .name = "magi",
    .uses_chunk_size = true,
    .balance = area_bound,
};

}  // namespace cplab::properties
