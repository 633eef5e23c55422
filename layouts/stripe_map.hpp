#pragma once
// stripe: the stream cut into stripes of g slots (g = the map's unit), stripe j held by rank
// j mod C, each rank's stripes ascending. Rank r's k-th slot lies in its stripe t = ⌊k/g⌋, global
// stripe t·C + r, at offset k mod g; at g = 1 rank r holds the slots x ≡ r (mod C).
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct StripeMap {
  std::int64_t cp;
  std::int64_t padded_len;
  std::int64_t width;  // g
  CPLAB_HD static StripeMap of(const MapView& v) {
    return {v.cp, v.padded_len, v.unit >= 1 ? v.unit : 1};
  }
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    return ((k / width) * cp + r) * width + k % width;
  }
  CPLAB_HD Slot owner(std::int64_t x) const {
    const std::int64_t stripe = x / width;
    return {stripe % cp, (stripe / cp) * width + x % width};
  }
};

}  // namespace cplab::index_math
