#pragma once
// contiguous (and identity, and every layout at C = 1): rank r holds [r·ℓ, (r+1)·ℓ).
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct ContiguousMap {
  std::int64_t cp;
  std::int64_t padded_len;
  CPLAB_HD static ContiguousMap of(const MapView& v) { return {v.cp, v.padded_len}; }
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    return r * local_len() + k;
  }
  CPLAB_HD Slot owner(std::int64_t g) const { return {g / local_len(), g % local_len()}; }
};

}  // namespace cplab::index_math
