// magi (MagiAttention dispatch): chunks of K slots assigned greedily by attention area, n/C per
// rank, each rank's chunks ascending; the stream is padded to a multiple of K·C.
#include "properties/layouts/closed_forms.hpp"

namespace cplab::properties {

namespace {

ClosedFormMap magi_closed_form(const MapParams& p) {
  if (p.cp == 1) return contiguous_closed_form(p);
  // Recorded parameters may be wrong (that is what is checked): refuse those the map cannot index.
  CPLAB_CHECK(
      p.chunk_size >= 1 && p.padded_len % (p.chunk_size * p.cp) == 0 &&
          static_cast<std::int64_t>(p.magi_rank_chunks.size()) * p.chunk_size == p.padded_len,
      "magi parameters do not describe L={} on cp={}: chunk size {}, {} assigned chunks",
      p.padded_len, p.cp, p.chunk_size, p.magi_rank_chunks.size());
  struct Arrays {
    std::vector<std::int64_t> rank_chunks, chunk_slot;
  };
  auto arrays = std::make_shared<Arrays>();
  arrays->rank_chunks = p.magi_rank_chunks;
  const auto chunks = static_cast<std::int64_t>(p.magi_rank_chunks.size());
  // chunk_slot inverts rank_chunks; a chunk listed twice or never is caught by the permutation
  // check.
  arrays->chunk_slot.assign(static_cast<std::size_t>(chunks), 0);
  for (std::int64_t slot = 0; slot < chunks; ++slot) {
    const std::int64_t chunk = p.magi_rank_chunks[static_cast<std::size_t>(slot)];
    if (chunk >= 0 && chunk < chunks) arrays->chunk_slot[static_cast<std::size_t>(chunk)] = slot;
  }
  const index_math::MagiMap map{p.cp, p.chunk_size, chunks / p.cp, arrays->rank_chunks.data(),
                                arrays->chunk_slot.data()};
  return closed_form_of(map, arrays);
}

}  // namespace

extern const LayoutEntry magi_entry;
const LayoutEntry magi_entry{
    .name = "magi",
    .closed_form = magi_closed_form,
    .bshd_rows = true,
    .packed_rows = true,
    .uses_chunk_size = true,
    .balance = BalanceRule::area_bound,
    .pad_unit = [](const LayoutSpec& spec) { return spec.cp * spec.chunk_size; },
};

}  // namespace cplab::properties
