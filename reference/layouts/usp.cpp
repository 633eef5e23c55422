// usp (yunchang's unified sequence parallel, SPEC §10.4, by construction): ring degree R times
// Ulysses degree U = C/R. The stream is padded to a multiple of 2RU = 2C and cut into 2R chunks;
// ring rank q's piece is chunk q then chunk 2R-1-q (head-tail at C = R); that piece is cut into U
// equal contiguous parts and Ulysses rank u takes part u. Global rank = q·U + u. Packed rows are
// one stream, as head-tail's. At C = 1 it is the identity.
#include "layouts/usp.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

using row_stream::SlotRange;

// The first `len` slots of a piece made of `ranges`, after skipping `skip` of them.
std::vector<SlotRange> part_of(const std::vector<SlotRange>& piece, std::int64_t skip,
                               std::int64_t len) {
  std::vector<SlotRange> out;
  for (const SlotRange& range : piece) {
    const std::int64_t size = range.end - range.begin;
    if (skip >= size) {
      skip -= size;
      continue;
    }
    const std::int64_t begin = range.begin + skip;
    const std::int64_t end = std::min(range.end, begin + len);
    out.push_back({begin, end});
    len -= end - begin;
    skip = 0;
    if (len == 0) break;
  }
  return out;
}

RowPlan plan_usp_row(const LayoutSpec& spec, std::int64_t caller_len,
                     const std::vector<std::int64_t>* seq_lens,
                     const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const std::int64_t ring = layouts::usp_ring_degree.of(spec);
  CPLAB_CHECK(ring >= 1 && spec.cp % ring == 0,
              "usp: ring degree R={} does not divide the CP size C={} (U = C/R)", ring, spec.cp);
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t ulysses = spec.cp / ring;
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(usp), row_stream::ceil_to(caller.len, 2 * ring * ulysses), pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  const std::int64_t chunk = len / (2 * ring), local = len / spec.cp;
  std::vector<std::vector<SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t q = 0; q < ring; ++q) {
    const std::int64_t tail = 2 * ring - 1 - q;
    const std::vector<SlotRange> piece = {{q * chunk, (q + 1) * chunk},
                                          {tail * chunk, (tail + 1) * chunk}};
    for (std::int64_t u = 0; u < ulysses; ++u)
      ranges[static_cast<std::size_t>(q * ulysses + u)] = part_of(piece, u * local, local);
  }
  row_stream::assign_ranges(row, ranges);
  row.map.unit = ring;  // the scalar of layouts/usp_map.hpp
  return row;
}

}  // namespace

extern const LayoutInfo usp_layout;
const LayoutInfo usp_layout{.name = CPLAB_LAYOUT_NAME(usp), .plan_row = plan_usp_row};

}  // namespace cplab::reference
