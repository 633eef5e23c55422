#include "gpu/host/magi_slots.hpp"

#include "reference/types/error.hpp"

namespace cplab::gpu {

std::vector<std::int64_t> magi_chunk_slots(const std::vector<std::int64_t>& rank_chunks,
                                           std::int64_t cp) {
  const auto n = static_cast<std::int64_t>(rank_chunks.size());
  CPLAB_CHECK(cp >= 1 && n >= cp && n % cp == 0,
              "magi: {} assigned chunks do not split evenly over cp={} ranks", n, cp);
  std::vector<std::int64_t> slot(rank_chunks.size(), -1);
  for (std::int64_t s = 0; s < n; ++s) {
    const std::int64_t chunk = rank_chunks[s];
    CPLAB_CHECK(chunk >= 0 && chunk < n, "magi: rank {} is assigned chunk {}, outside [0, {})",
                s / (n / cp), chunk, n);
    CPLAB_CHECK(slot[chunk] < 0, "magi: chunk {} is assigned twice (ranks {} and {})", chunk,
                slot[chunk] / (n / cp), s / (n / cp));
    slot[chunk] = s;
  }
  return slot;
}

}  // namespace cplab::gpu
