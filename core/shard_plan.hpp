#pragma once
// The reference's global description of how one batch is laid out on C ranks (SPEC §0-§4).
#include <cstdint>
#include <vector>

#include "core/layout_spec.hpp"
#include "core/map_params.hpp"
#include "core/varlen_segments.hpp"

namespace cplab {

// One stream (a BSHD row or a packed row) on C ranks. Global slot g ∈ [0, L) of the padded stream.
struct RowPlan {
  std::int64_t cp = 1;
  std::int64_t caller_len = 0;     // S: the row as the caller gave it
  std::int64_t original_len = -1;  // S for BSHD rows; -1 (absent) for packed streams
  std::int64_t padded_len = 0;     // L
  bool packed = false;

  std::vector<std::vector<std::int64_t>> index;  // [C][ℓ]: global slot of each local token
  std::vector<std::int64_t> caller_pos;  // [L]: caller position held by slot g; -1 = added pad
  std::vector<std::int64_t> positions;   // [L]: position ids, computed before partitioning
  std::vector<std::int32_t> doc_ids;     // [L]: 1-based document, 0 = row padding
  std::vector<std::uint8_t> real;        // [L]: 1 = a real token (not document or row padding)
  // Packed rows: documents in the padded stream, [0, cumsum(lengths each occupies)] (thd: the
  // per-document padded lengths). One entry per document, zero-length ones included.
  std::vector<std::int64_t> cu_seqlens_padded;
  // [C]: local cu_seqlens of a layout whose ranks hold whole local documents; empty otherwise.
  std::vector<std::vector<std::int64_t>> local_cu_seqlens;
  std::vector<std::int64_t> valid_tokens;  // [C]: real tokens each rank holds
  // What the layout's closed-form map needs beyond C and L, as the layout's own reference file
  // derives it (empty when the map follows from C and L), and, for a map that is an assignment,
  // the cost of every unit it balanced (its own file says what a unit is).
  MapParams map;
  std::vector<std::int64_t> map_costs;
  // [C]: each rank's varlen attention segments, for a layout whose ranks attend through them
  // (its own reference file builds them); empty otherwise.
  std::vector<VarlenSegments> varlen;

  std::int64_t local_len() const { return cp > 0 ? padded_len / cp : 0; }
};

struct ShardPlan {
  LayoutSpec spec;
  std::vector<RowPlan> rows;  // one per row of the batch (BSHD rows share one layout)
  std::int64_t rows_per_microbatch() const {
    return spec.microbatches > 0 ? static_cast<std::int64_t>(rows.size()) / spec.microbatches : 0;
  }
};

}  // namespace cplab
