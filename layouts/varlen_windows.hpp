#pragma once
// The keys each local query of a rank may see when it attends through varlen segments, as a
// flash-attention varlen kernel with causal = true reads them: query j of segment s (local
// [cu_q[s], cu_q[s+1])) sees the keys of key segment s (slots k_begin + [cu_k[s], cu_k[s+1])) up
// to the bottom-right-aligned diagonal, key offset t <= (j - cu_q[s]) + (len_k - len_q). The
// twin's attention and the GPU path's both use these windows of global slots, so a segment that is
// wrong shows the same way on either.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/varlen_segments.hpp"

namespace cplab::sim {

struct KeyWindow {
  std::int64_t begin = 0;  // global slots [begin, end)
  std::int64_t end = 0;
};

// One window per local query (local_len of them). Segments that do not tile [0, local_len) with
// key segments inside the slice are an error naming them, never a wild index.
inline std::vector<KeyWindow> query_key_windows(const VarlenSegments& s, std::int64_t local_len,
                                                std::int64_t padded_len) {
  const std::vector<std::int64_t>& q = s.cu_seqlens_q;
  const std::vector<std::int64_t>& k = s.cu_seqlens_k;
  const bool shaped = q.size() >= 2 && q.size() == k.size() && q.front() == 0 &&
                      q.back() == local_len && k.front() == 0 &&
                      std::is_sorted(q.begin(), q.end()) && std::is_sorted(k.begin(), k.end()) &&
                      s.k_begin >= 0 && s.k_begin <= s.k_end && s.k_end <= padded_len &&
                      k.back() <= s.k_end - s.k_begin;
  CPLAB_CHECK(shaped,
              "varlen segments cu_seqlens_q {} cu_seqlens_k {} slice [{}, {}) do not describe {} "
              "local queries over keys of a stream of L={}",
              fmt::format("{}", fmt::join(q, ",")), fmt::format("{}", fmt::join(k, ",")), s.k_begin,
              s.k_end, local_len, padded_len);
  std::vector<KeyWindow> windows(static_cast<std::size_t>(local_len));
  for (std::size_t seg = 0; seg + 1 < q.size(); ++seg) {
    const std::int64_t len_q = q[seg + 1] - q[seg], len_k = k[seg + 1] - k[seg];
    const std::int64_t keys = s.k_begin + k[seg];
    for (std::int64_t j = 0; j < len_q; ++j) {
      const std::int64_t last = std::min(len_k, j + (len_k - len_q) + 1);  // keys [0, last)
      windows[static_cast<std::size_t>(q[seg] + j)] = {keys,
                                                       keys + std::max<std::int64_t>(0, last)};
    }
  }
  return windows;
}

}  // namespace cplab::sim
