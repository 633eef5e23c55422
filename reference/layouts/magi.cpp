// magi (MagiAttention dispatch, SPEC §3): the stream is padded at its end to a multiple of K·C and
// cut into chunks of K slots; chunks go to ranks by their attention area, greedily, n/C per rank.
//
// Interpretation: a BSHD row is one causal document (doc id 1 on its caller slots); a packed row
// keeps its documents at their caller offsets. The area of a chunk is the number of (real query,
// real key) pairs the document-causal mask allows for the chunk's queries, counted pair by pair.
// Position ids are global stream indices (not reset per document), pads included.
#include "layouts/magi.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"

namespace cplab::reference {
namespace {

// The "min-heap" rule of SPEC §3: chunks by area descending (equal areas: higher index first), each
// to the least-loaded rank that still has room (equal loads: lower rank); each rank's chunks
// sorted.
std::vector<std::vector<std::int64_t>> assign_chunks(const std::vector<std::int64_t>& areas,
                                                     std::int64_t cp) {
  const auto chunks = static_cast<std::int64_t>(areas.size());
  CPLAB_CHECK(chunks % cp == 0, "magi: {} chunks do not divide over cp={} ranks", chunks, cp);
  const std::int64_t per_rank = chunks / cp;
  std::vector<std::int64_t> order(static_cast<std::size_t>(chunks));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return areas[a] != areas[b] ? areas[a] > areas[b] : a > b;
  });
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(cp));
  std::vector<std::int64_t> load(static_cast<std::size_t>(cp), 0);
  for (std::int64_t chunk : order) {
    std::int64_t best = -1;
    for (std::int64_t r = 0; r < cp; ++r) {
      if (static_cast<std::int64_t>(owned[r].size()) == per_rank) continue;
      if (best < 0 || load[r] < load[best]) best = r;
    }
    owned[best].push_back(chunk);
    load[best] += areas[chunk];
  }
  for (auto& list : owned) std::sort(list.begin(), list.end());
  return owned;
}

RowPlan plan_magi_row(const LayoutSpec& spec, std::int64_t caller_len,
                      const std::vector<std::int64_t>* seq_lens,
                      const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1 && layouts::magi_chunk_pad_at_cp1.of(spec) == 0)
    return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t chunk_size = layouts::magi_chunk_size.of(spec);
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(magi), row_stream::ceil_to(caller.len, chunk_size * spec.cp), pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  std::iota(row.positions.begin(), row.positions.end(), std::int64_t{0});

  const std::vector<std::int64_t> seen = visible_keys(row);
  const std::int64_t chunks = len / chunk_size;
  // map_costs: every chunk's area; map: the rank-major assignment and K (layouts/magi_map.hpp).
  row.map_costs.assign(static_cast<std::size_t>(chunks), 0);
  for (std::int64_t j = 0; j < chunks; ++j) {
    for (std::int64_t g = j * chunk_size; g < (j + 1) * chunk_size; ++g)
      row.map_costs[j] += seen[g];
  }
  const std::vector<std::vector<std::int64_t>> owned = assign_chunks(row.map_costs, spec.cp);
  row.map.unit = chunk_size;
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    for (std::int64_t chunk : owned[r]) {
      ranges[r].push_back({chunk * chunk_size, (chunk + 1) * chunk_size});
      row.map.table.push_back(chunk);
    }
  }
  row_stream::assign_ranges(row, ranges);
  return row;
}

}  // namespace

extern const LayoutInfo magi_layout;
const LayoutInfo magi_layout{.name = CPLAB_LAYOUT_NAME(magi), .plan_row = plan_magi_row};

}  // namespace cplab::reference
