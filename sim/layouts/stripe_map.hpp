#pragma once
// stripe: rank r holds the slots g ≡ r (mod C), ascending, so its k-th token is slot k·C + r.
#include "sim/index_math.hpp"

namespace cplab::index_math {

struct StripeMap {
  std::int64_t cp;
  std::int64_t padded_len;
  CPLAB_HD static StripeMap of(const MapView& v) { return {v.cp, v.padded_len}; }
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const { return k * cp + r; }
  CPLAB_HD Slot owner(std::int64_t g) const { return {g % cp, g / cp}; }
};

}  // namespace cplab::index_math
