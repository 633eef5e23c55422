// magi's chunk areas and greedy assignment (SPEC §3). The areas come in closed form: within one
// document the real query at offset t sees t+1 real keys, so a chunk's share of a document is a
// difference of triangular numbers. The reference counts the pairs one by one instead.
#include <algorithm>
#include <numeric>
#include <queue>
#include <utility>

#include "reference/types/error.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {
namespace {

// 1 + 2 + ... + x: the keys seen by the first x real queries of a document.
constexpr std::int64_t triangle(std::int64_t x) { return x * (x + 1) / 2; }

// Adds to every chunk overlapping [start, start + real) the keys its queries see in this document.
void add_document(std::vector<std::int64_t>& areas, std::int64_t chunk_size, std::int64_t start,
                  std::int64_t real) {
  if (real <= 0) return;
  const std::int64_t end = start + real;
  for (std::int64_t j = start / chunk_size; j * chunk_size < end; ++j) {
    const std::int64_t from = std::max(j * chunk_size, start) - start;
    const std::int64_t to = std::min((j + 1) * chunk_size, end) - start;
    areas[j] += triangle(to) - triangle(from);
  }
}

}  // namespace

std::vector<std::int64_t> magi_chunk_areas(const RowStream& stream) {
  const std::int64_t k = stream.chunk_size;
  CPLAB_CHECK(k >= 1 && stream.padded_len % k == 0,
              "magi: L={} is not a multiple of the chunk size K={}", stream.padded_len, k);
  std::vector<std::int64_t> areas(static_cast<std::size_t>(stream.padded_len / k), 0);
  if (!stream.packed) {
    add_document(areas, k, 0, stream.caller_len);  // a BSHD row is one causal document
    return areas;
  }
  for (std::size_t i = 0; i < stream.doc_real.size(); ++i)
    add_document(areas, k, stream.doc_bounds[i], stream.doc_real[i]);
  return areas;
}

std::vector<std::vector<std::int64_t>> magi_assign(const std::vector<std::int64_t>& areas,
                                                   std::int64_t cp, const PartitionRules& rules) {
  const auto chunks = static_cast<std::int64_t>(areas.size());
  CPLAB_CHECK(cp >= 1 && chunks % cp == 0, "magi: {} chunks do not divide over cp={} ranks", chunks,
              cp);
  const std::int64_t per_rank = chunks / cp;
  std::vector<std::int64_t> order(static_cast<std::size_t>(chunks));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return rules.magi_chunk_precedes(areas[a], a, areas[b], b);
  });
  // Min-heap of (load, rank): the least-loaded rank on top, equal loads the lower rank. A rank
  // leaves the heap once it holds its n/C chunks.
  using Entry = std::pair<std::int64_t, std::int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ranks;
  for (std::int64_t r = 0; r < cp; ++r) ranks.push({0, r});
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(cp));
  for (std::int64_t chunk : order) {
    const auto [load, rank] = ranks.top();
    ranks.pop();
    owned[rank].push_back(chunk);
    if (static_cast<std::int64_t>(owned[rank].size()) < per_rank)
      ranks.push({load + areas[chunk], rank});
  }
  for (auto& list : owned) std::sort(list.begin(), list.end());
  return owned;
}

}  // namespace cplab::sim
