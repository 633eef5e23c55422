#include "core/map_checks.hpp"

#include <fmt/format.h>

#include <vector>

namespace cplab {

MapFault find_map_fault(std::span<const std::int64_t> map, std::int64_t lo, std::int64_t hi,
                        bool distinct) {
  for (std::size_t k = 0; k < map.size(); ++k) {
    if (map[k] < lo || map[k] >= hi)
      return {.at = static_cast<std::int64_t>(k), .value = map[k], .repeated = false};
  }
  if (!distinct || hi <= 0) return {};
  // One byte per slot, cleared before each use: a memset of hi bytes, no allocation once the
  // thread's bitmap has grown to the largest stream it checked.
  thread_local std::vector<std::uint8_t> seen;
  seen.assign(static_cast<std::size_t>(hi), 0);
  for (std::size_t k = 0; k < map.size(); ++k) {
    if (map[k] < 0) continue;
    std::uint8_t& mark = seen[static_cast<std::size_t>(map[k])];
    if (mark != 0) return {.at = static_cast<std::int64_t>(k), .value = map[k], .repeated = true};
    mark = 1;
  }
  return {};
}

std::string describe_map_fault(const MapFault& fault, std::int64_t lo, std::int64_t hi) {
  if (fault.repeated) {
    return fmt::format("entry {} is {}, a slot an earlier entry already names", fault.at,
                       fault.value);
  }
  return fmt::format("entry {} is {}, outside [{}, {})", fault.at, fault.value, lo, hi);
}

}  // namespace cplab
