#pragma once
// Closed-form index math of every layout: which global slot a rank's k-th local token is, and who
// owns global slot g. Host and device code (the GPU kernels) share these very functions, and the
// CPU tests run them against the reference, which derives its maps by construction instead.
//
// Each layout is a small trivially-copyable map with
//   global_index(r, k) → g        owner(g) → {rank, offset}        local_len()
// so a kernel can be templated on the map and passed it by value.
#include <cstdint>

#if defined(__CUDACC__)
#define CPLAB_HD __host__ __device__
#else
#define CPLAB_HD
#endif

namespace cplab::index_math {

struct Slot {
  std::int64_t rank;
  std::int64_t offset;
};

CPLAB_HD constexpr std::int64_t ceil_to(std::int64_t x, std::int64_t m) { return x + ((m - x % m) % m); }

// Last index i in [0, n) with a[i] <= x (a ascending, a[0] <= x). Zero-length documents repeat a
// value; taking the last such index lands on the document that really holds x.
CPLAB_HD inline std::int64_t upper_index(const std::int64_t* a, std::int64_t n, std::int64_t x) {
  std::int64_t lo = 0, hi = n;  // invariant: a[lo] <= x, answer in [lo, hi)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] <= x) lo = mid; else hi = mid;
  }
  return lo;
}

// contiguous (and identity, which is contiguous with C = 1): rank r holds [r·ℓ, (r+1)·ℓ).
struct ContiguousMap {
  std::int64_t cp;
  std::int64_t padded_len;
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const { return r * local_len() + k; }
  CPLAB_HD Slot owner(std::int64_t g) const { return {g / local_len(), g % local_len()}; }
};

// head-tail: chunk c = L/(2C); rank r holds chunk r, then chunk 2C-1-r.
struct HeadTailMap {
  std::int64_t cp;
  std::int64_t padded_len;
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

// thd: head-tail inside every document. cu_padded = [0, cumsum(P_i)] with every P_i a multiple of
// 2C; a rank's local stream is, document by document, its two chunks of that document, so the
// local cu_seqlens are cu_padded / C.
struct ThdMap {
  std::int64_t cp;
  const std::int64_t* cu_padded;  // n_docs + 1 entries
  std::int64_t n_docs;
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
    return q < cp ? Slot{q, local_start + j - q * c} : Slot{2 * cp - 1 - q, local_start + c + j - q * c};
  }
};

// magi: fixed chunks of K tokens; rank r holds its assigned chunks in ascending order.
// rank_chunks[r · per_rank + i] is rank r's i-th chunk; chunk_slot[j] = r · per_rank + i inverts it.
struct MagiMap {
  std::int64_t cp;
  std::int64_t chunk_size;
  std::int64_t per_rank;  // chunks per rank
  const std::int64_t* rank_chunks;
  const std::int64_t* chunk_slot;
  CPLAB_HD std::int64_t local_len() const { return per_rank * chunk_size; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    return rank_chunks[r * per_rank + k / chunk_size] * chunk_size + k % chunk_size;
  }
  CPLAB_HD Slot owner(std::int64_t g) const {
    const std::int64_t slot = chunk_slot[g / chunk_size];
    return {slot / per_rank, (slot % per_rank) * chunk_size + g % chunk_size};
  }
};

}  // namespace cplab::index_math
