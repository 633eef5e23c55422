#pragma once
// The parameters a layout's closed-form map needs beyond C and L, as a rank records them: one
// table and one scalar. Which layout fills them, and with what, is said in that layout's own files
// (its map header layouts/ID_map.hpp); layouts whose map follows from C and L leave them empty.
#include <cstdint>
#include <vector>

namespace cplab {

struct MapParams {
  std::vector<std::int64_t> table;
  std::int64_t unit = 0;  // 0: the layout has no scalar parameter
  bool operator==(const MapParams&) const = default;
};

}  // namespace cplab
