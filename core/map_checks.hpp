#pragma once
// Checks on the maps an implementation under test hands to shared code (token moves, gathers, the
// loss exchange, the properties): one pass over a map, every entry in range and, where the code
// that moves by it writes each slot once, no slot named twice. They run in every build type, so a
// wrong map is a named failure of its case, never a write through a wild index. The repeat check
// uses a bitmap the thread keeps between calls (no allocation per map once it has grown).
#include <cstdint>
#include <span>
#include <string>

namespace cplab {

// The first entry of a map that is wrong: `at` its position, `value` what it holds; `repeated`
// when it is in range but an earlier entry named the same slot. `at` is -1 when none is wrong.
struct MapFault {
  std::int64_t at = -1;
  std::int64_t value = 0;
  bool repeated = false;
  explicit operator bool() const { return at >= 0; }
};

// Entries must lie in [lo, hi); with `distinct`, no value >= 0 may occur twice (-1, "none", may).
MapFault find_map_fault(std::span<const std::int64_t> map, std::int64_t lo, std::int64_t hi,
                        bool distinct);

// "entry 5 is 19, outside [0, 16)" or "entry 5 is 3, a slot an earlier entry already names".
std::string describe_map_fault(const MapFault& fault, std::int64_t lo, std::int64_t hi);

}  // namespace cplab
