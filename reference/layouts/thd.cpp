// thd (TransformerEngine THD partition, SPEC §3): head-tail inside every document of a packed row.
//
// Interpretation of the row:
//  - each document is re-laid at P_i = ceil_to(seq_lens[i], 2C) slots (its padding at its end),
//    whatever the caller's seq_lens_padded were; a zero-length document gets P_i = 0 and still uses
//    up its id. Real tokens keep a caller_pos pointing at their caller slot, so tokens move when
//    the caller's padding differs; pad slots are filled by the pad rules (caller_pos = -1).
//  - L = max(ΣP_i, ceil_to(S, 2C)) (or a length the caller pins); whatever exceeds ΣP_i is row
//    padding, added to the last document ("row padding is added to the last document"), so every
//    slot belongs to a document and positions run on through it.
//  - rank r's stream is, document by document, [s_i + r·c_i, +c_i) ‖ [s_i + (2C-1-r)·c_i, +c_i)
//    with c_i = P_i/(2C) (rank-major); local cu_seqlens = cu_seqlens_padded / C on every rank.
#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

RowPlan plan_thd_row(const LayoutSpec& spec, std::int64_t caller_len,
                     const std::vector<std::int64_t>* seq_lens,
                     const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  CPLAB_CHECK(caller.packed,
              "thd partitions packed rows (documents with seq_lens); got a BSHD row of S={}",
              caller.len);
  CPLAB_CHECK(caller.documents() > 0,
              "thd: a packed row with no documents (S={}) has nothing to partition", caller.len);
  if (spec.cp == 1) {
    RowPlan row = row_stream::identity_plan(caller, pinned_len);
    row.local_cu_seqlens = {row.cu_seqlens_padded};
    return row;
  }
  const std::int64_t two_c = 2 * spec.cp;
  std::vector<std::int64_t> occupied(caller.seq_lens.size());
  for (std::size_t i = 0; i < occupied.size(); ++i)
    occupied[i] = row_stream::ceil_to(caller.seq_lens[i], two_c);
  const std::int64_t documents_len =
      std::accumulate(occupied.begin(), occupied.end(), std::int64_t{0});
  std::int64_t len = std::max(documents_len, row_stream::ceil_to(caller.len, two_c));
  if (pinned_len > 0) {
    CPLAB_CHECK(pinned_len % two_c == 0, "thd row length L={} is not a multiple of 2C={} (cp={})",
                pinned_len, two_c, spec.cp);
    CPLAB_CHECK(pinned_len >= len,
                "thd needs L={} for this row (documents padded to 2C={} take {}, S={}), more than "
                "the pinned row length {}",
                len, two_c, documents_len, caller.len, pinned_len);
    len = pinned_len;
  }
  occupied.back() += len - documents_len;

  RowPlan row;
  row.cp = spec.cp;
  row.caller_len = caller.len;
  row.padded_len = len;
  row.packed = true;
  const auto n = static_cast<std::size_t>(len);
  row.caller_pos.assign(n, -1);
  row.positions.assign(n, 0);
  row.doc_ids.assign(n, 0);
  row.real.assign(n, 0);
  row.cu_seqlens_padded = {0};
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t i = 0; i < caller.documents(); ++i) {
    const std::int64_t start = row.cu_seqlens_padded.back();
    for (std::int64_t j = 0; j < occupied[i]; ++j) {
      const bool real = j < caller.seq_lens[i];
      row.caller_pos[start + j] = real ? caller.starts[i] + j : -1;
      row.positions[start + j] = j;
      row.doc_ids[start + j] = static_cast<std::int32_t>(i + 1);
      row.real[start + j] = real ? 1 : 0;
    }
    const std::int64_t c = occupied[i] / two_c;
    for (std::int64_t r = 0; r < spec.cp; ++r) {
      const std::int64_t tail = two_c - 1 - r;
      ranges[r].push_back({start + r * c, start + (r + 1) * c});
      ranges[r].push_back({start + tail * c, start + (tail + 1) * c});
    }
    row.cu_seqlens_padded.push_back(start + occupied[i]);
  }
  row_stream::assign_ranges(row, ranges);
  std::vector<std::int64_t> local_cu;
  for (std::int64_t boundary : row.cu_seqlens_padded) local_cu.push_back(boundary / spec.cp);
  row.local_cu_seqlens.assign(static_cast<std::size_t>(spec.cp), local_cu);
  row.map.table = row.cu_seqlens_padded;  // the table of layouts/thd_map.hpp
  return row;
}

}  // namespace

extern const LayoutInfo thd_layout;
const LayoutInfo thd_layout{.name = CPLAB_LAYOUT_NAME(thd), .plan_row = plan_thd_row};

}  // namespace cplab::reference
