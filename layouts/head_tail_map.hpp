#pragma once
// head-tail: chunk c = L/(2C); rank r holds chunk r, then chunk 2C-1-r.
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct HeadTailMap {
  std::int64_t cp;
  std::int64_t padded_len;
  CPLAB_HD static HeadTailMap of(const MapView& v) { return {v.cp, v.padded_len}; }
  CPLAB_HD std::int64_t chunk() const { return padded_len / (2 * cp); }
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    const std::int64_t c = chunk();
    return k < c ? r * c + k : (2 * cp - 1 - r) * c + (k - c);
  }
  CPLAB_HD Slot owner(std::int64_t g) const {
    const std::int64_t c = chunk();
    const std::int64_t q = g / c;
    return q < cp ? Slot{q, g - q * c} : Slot{2 * cp - 1 - q, c + g - q * c};
  }
};

}  // namespace cplab::index_math
