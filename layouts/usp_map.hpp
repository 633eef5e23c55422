#pragma once
// usp (yunchang unified sequence parallel): ring degree R = unit, U = C/R, chunk c = L/(2R),
// ℓ = L/C. Global rank r is ring rank q = ⌊r/U⌋ and Ulysses rank u = r mod U; its k-th token is
// slot p = u·ℓ + k of ring rank q's piece (chunk q, then chunk 2R-1-q).
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct UspMap {
  std::int64_t cp;
  std::int64_t padded_len;
  std::int64_t ring;  // R (validated by the descriptor's prepare: R ≥ 1 divides C)
  CPLAB_HD static UspMap of(const MapView& v) { return {v.cp, v.padded_len, v.unit}; }
  CPLAB_HD std::int64_t chunk() const { return padded_len / (2 * ring); }
  CPLAB_HD std::int64_t ulysses() const { return cp / ring; }
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    const std::int64_t c = chunk(), q = r / ulysses();
    const std::int64_t p = (r % ulysses()) * local_len() + k;  // slot in ring rank q's piece
    return p < c ? q * c + p : (2 * ring - 1 - q) * c + (p - c);
  }
  CPLAB_HD Slot owner(std::int64_t g) const {
    const std::int64_t c = chunk(), j = g / c;
    const std::int64_t q = j < ring ? j : 2 * ring - 1 - j;
    const std::int64_t p = j < ring ? g - j * c : c + g - j * c;
    return {q * ulysses() + p / local_len(), p % local_len()};
  }
};

}  // namespace cplab::index_math
