#pragma once
// thd: head-tail inside every document. The table is cu_padded = [0, cumsum(P_i)] with every P_i a
// multiple of 2C; a rank's local stream is, document by document, its two chunks of that document,
// so the local cu_seqlens are cu_padded / C.
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct ThdMap {
  std::int64_t cp;
  const std::int64_t* cu_padded;  // n_docs + 1 entries
  std::int64_t n_docs;
  CPLAB_HD static ThdMap of(const MapView& v) { return {v.cp, v.table, v.table_len - 1}; }
  CPLAB_HD std::int64_t padded_len() const { return cu_padded[n_docs]; }
  CPLAB_HD std::int64_t local_len() const { return cu_padded[n_docs] / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    // Local document boundaries are cu_padded[i] / C; search on k·C to stay in global units.
    const std::int64_t i = upper_index(cu_padded, n_docs, k * cp);
    const std::int64_t start = cu_padded[i];
    const std::int64_t c = (cu_padded[i + 1] - start) / (2 * cp);
    const std::int64_t j = k - start / cp;
    return j < c ? start + r * c + j : start + (2 * cp - 1 - r) * c + (j - c);
  }
  CPLAB_HD Slot owner(std::int64_t g) const {
    const std::int64_t i = upper_index(cu_padded, n_docs, g);
    const std::int64_t start = cu_padded[i];
    const std::int64_t c = (cu_padded[i + 1] - start) / (2 * cp);
    const std::int64_t j = g - start;
    const std::int64_t q = j / c;
    const std::int64_t local_start = start / cp;
    return q < cp ? Slot{q, local_start + j - q * c}
                  : Slot{2 * cp - 1 - q, local_start + c + j - q * c};
  }
};

}  // namespace cplab::index_math
