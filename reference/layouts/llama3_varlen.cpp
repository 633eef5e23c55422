// llama3-varlen (ring-flash-attention's llama3_flash_attn_varlen, SPEC §10.3, by construction):
// contiguous ranks over a packed row that must already be a multiple of C (nothing is padded, and
// documents may cross rank boundaries), rank r holding [r·n, (r+1)·n) with n = L/C. Each rank also
// gets the varlen segments its queries attend through, listed document by document: every
// document that overlaps the rank's slots, or starts inside them (zero-length ones included),
// gives one query segment (its part on the rank) and one key segment (from the document's start
// up to where the rank's queries in it end). Row padding after the last document is one more
// segment, of pad slots that see nothing.
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

VarlenSegments rank_segments(const std::vector<std::int64_t>& bounds, std::int64_t rank,
                             std::int64_t local) {
  const std::int64_t lo = rank * local, hi = lo + local;
  VarlenSegments s;
  s.cu_seqlens_q = {0};
  s.cu_seqlens_k = {0};
  bool first = true;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::int64_t start = bounds[i], end = bounds[i + 1];
    const bool on_rank = start < hi && (end > lo || start >= lo);
    if (!on_rank) continue;
    if (first) s.k_begin = start;
    first = false;
    const std::int64_t stop = std::min(end, hi);  // where the rank's queries in it end
    s.cu_seqlens_q.push_back(stop - lo);
    s.cu_seqlens_k.push_back(stop - s.k_begin);
  }
  CPLAB_CHECK(!first, "llama3-varlen: rank {} of slots [{}, {}) overlaps no document of bounds {}",
              rank, lo, hi, fmt::format("{}", bounds));
  s.k_end = hi;  // causal: keys end where the rank's queries end
  return s;
}

RowPlan plan_llama3_varlen_row(const LayoutSpec& spec, std::int64_t caller_len,
                               const std::vector<std::int64_t>* seq_lens,
                               const std::vector<std::int64_t>* seq_lens_padded,
                               std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  CPLAB_CHECK(
      caller.packed,
      "llama3-varlen lays out packed rows (documents with seq_lens); got a BSHD row of S={}",
      caller.len);
  CPLAB_CHECK(caller.documents() > 0 && caller.len > 0,
              "llama3-varlen: a packed row with no documents or no slots (S={}) has nothing to lay "
              "out",
              caller.len);
  RowPlan row;
  if (spec.cp == 1) {
    row = row_stream::identity_plan(caller, pinned_len);
  } else {
    CPLAB_CHECK(caller.len % spec.cp == 0,
                "llama3-varlen pads nothing: the row length S={} must be a multiple of C={} (the "
                "padding is the caller's)",
                caller.len, spec.cp);
    const std::int64_t len =
        row_stream::resolve_padded_len(CPLAB_LAYOUT_NAME(llama3_varlen), caller.len, pinned_len);
    row = row_stream::end_padded_stream(caller, spec.cp, len);
    const std::int64_t local = len / spec.cp;
    std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
    for (std::int64_t r = 0; r < spec.cp; ++r) ranges[r] = {{r * local, (r + 1) * local}};
    row_stream::assign_ranges(row, ranges);
  }
  std::vector<std::int64_t> bounds = row.cu_seqlens_padded;
  if (bounds.back() < row.padded_len) bounds.push_back(row.padded_len);  // the row padding
  for (std::int64_t r = 0; r < spec.cp; ++r)
    row.varlen.push_back(rank_segments(bounds, r, row.local_len()));
  return row;
}

}  // namespace

extern const LayoutInfo llama3_varlen_layout;
const LayoutInfo llama3_varlen_layout{.name = CPLAB_LAYOUT_NAME(llama3_varlen),
                                      .plan_row = plan_llama3_varlen_row};

}  // namespace cplab::reference
