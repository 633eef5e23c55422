// per-doc-head-tail (torch's _PerDocumentHeadTailLoadBalancer, SPEC §10.1), by construction:
// head-tail inside every document of a row, the padding being the caller's.
//
// Interpretation of the row:
//  - the documents are the row's seq_lens / seq_lens_padded (a BSHD row without them is one
//    document of S tokens); each occupies seq_lens_padded[i] slots, a multiple of 2C, and together
//    they fill the row. Nothing is padded: L = S. Anything else is refused, naming the document.
//  - positions are the stream indices, arange(S), as on any BSHD row (not restarted per
//    document); the documents give the document ids.
//  - rank r's stream is, document by document, [s_i + r·c_i, +c_i) ‖ [s_i + (2C-1-r)·c_i, +c_i)
//    with c_i = P_i/(2C): rank-major.
#include <numeric>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

// The slots each document occupies, checked against the caller's padding rule.
std::vector<std::int64_t> document_slots(const row_stream::CallerRow& caller, std::int64_t cp) {
  const std::int64_t two_c = 2 * cp;
  if (!caller.packed) {
    CPLAB_CHECK(caller.len % two_c == 0,
                "per-doc-head-tail: a BSHD row of S={} is one document, not a multiple of 2C={} "
                "(cp={}); the padding is the caller's",
                caller.len, two_c, cp);
    return {caller.len};
  }
  std::int64_t filled = 0;
  for (std::int64_t i = 0; i < caller.documents(); ++i) {
    const std::int64_t slots = caller.seq_lens_padded[i];
    CPLAB_CHECK(slots % two_c == 0,
                "per-doc-head-tail: document {} occupies {} slots, not a multiple of 2C={} "
                "(cp={}); the padding is the caller's: pad every document to a multiple of 2C",
                i + 1, slots, two_c, cp);
    filled += slots;
  }
  CPLAB_CHECK(filled == caller.len,
              "per-doc-head-tail: the documents occupy {} of the row's S={} slots; they must fill "
              "the row (the padding is the caller's: give it to the last document)",
              filled, caller.len);
  return caller.seq_lens_padded;
}

RowPlan plan_per_doc_head_tail_row(const LayoutSpec& spec, std::int64_t caller_len,
                                   const std::vector<std::int64_t>* seq_lens,
                                   const std::vector<std::int64_t>* seq_lens_padded,
                                   std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::vector<std::int64_t> slots = document_slots(caller, spec.cp);
  const std::int64_t len =
      row_stream::resolve_padded_len(CPLAB_LAYOUT_NAME(per_doc_head_tail), caller.len, pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  std::iota(row.positions.begin(), row.positions.end(), std::int64_t{0});

  const std::int64_t two_c = 2 * spec.cp;
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  std::vector<std::int64_t> bounds = {0};
  for (const std::int64_t occupied : slots) {
    const std::int64_t start = bounds.back(), c = occupied / two_c;
    for (std::int64_t r = 0; r < spec.cp; ++r) {
      const std::int64_t tail = two_c - 1 - r;
      ranges[r].push_back({start + r * c, start + (r + 1) * c});
      ranges[r].push_back({start + tail * c, start + (tail + 1) * c});
    }
    bounds.push_back(start + occupied);
  }
  row_stream::assign_ranges(row, ranges);
  row.map.table = bounds;  // the table of layouts/thd_map.hpp: the caller's document bounds
  return row;
}

}  // namespace

extern const LayoutInfo per_doc_head_tail_layout;
const LayoutInfo per_doc_head_tail_layout{.name = CPLAB_LAYOUT_NAME(per_doc_head_tail),
                                          .plan_row = plan_per_doc_head_tail_row};

}  // namespace cplab::reference
