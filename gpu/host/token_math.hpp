#pragma once
// Per-token arithmetic of the copy and partition kernels, host/device so the CPU tests run it as
// is.
#include <cstdint>

#include "layouts/index_math.hpp"

namespace cplab::gpu {

// Token t of outer slice o: in a plain [outer, tokens] tensor, or in blocks
// [tokens / block][outer][block] (rank shards as an all-gather or a reduce-scatter lays them out).
CPLAB_HD inline std::int64_t token_offset(std::int64_t o, std::int64_t t, std::int64_t tokens,
                                          std::int64_t block, std::int64_t outer) {
  if (block == 0) return o * tokens + t;
  const std::int64_t b = t / block;
  return (b * outer + o) * block + (t - b * block);
}

// The `width` (1, 2, 4 or 8) fill bytes at byte offset `at` of a token, from the first 8 bytes of
// the fill pattern (little-endian). The pattern's period, the element size, divides 8, and pieces
// are aligned to their width, so a piece never wraps.
CPLAB_HD inline std::uint64_t fill_bits(std::uint64_t fill8, std::int64_t at, std::int64_t width) {
  const std::uint64_t shifted = fill8 >> (8 * (at % 8));
  return width >= 8 ? shifted : shifted & ((std::uint64_t{1} << (8 * width)) - 1);
}

// One local token of a packed row whose documents were re-laid (every slot lies in a document):
// its global slot from the closed-form map, its document by binary search of the bounds, its
// position (offset in the document, through its padding) and realness.
struct RelaidToken {
  std::int64_t slot;
  std::int64_t position;
  std::int32_t doc_id;  // 1-based
  bool real;
};

template <typename Map>
CPLAB_HD RelaidToken relaid_token(const Map& map, const std::int64_t* doc_bounds,
                                  std::int64_t n_docs, const std::int64_t* doc_lens,
                                  std::int64_t rank, std::int64_t k) {
  const std::int64_t g = map.global_index(rank, k);
  const std::int64_t doc = index_math::upper_index(doc_bounds, n_docs, g);
  const std::int64_t offset = g - doc_bounds[doc];
  return {g, offset, static_cast<std::int32_t>(doc + 1), offset < doc_lens[doc]};
}

}  // namespace cplab::gpu
