#pragma once
// What one rank records when it shards a microbatch (SPEC §5): enough to run every later verb
// rank-locally. Index maps are its own; the verbs gather the others' when they need them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/layout_spec.hpp"
#include "core/map_params.hpp"
#include "core/tensor.hpp"
#include "core/varlen_segments.hpp"

namespace cplab {

struct ShardLayout {
  std::string layout;
  std::int64_t cp = 1;
  std::int64_t rank = 0;
  std::int64_t padded_len = 0;     // L
  std::int64_t original_len = -1;  // S of BSHD rows; -1 (absent) for packed streams
  std::int64_t caller_len = 0;     // S of the caller's rows (THD rows: their [B,S] shape's S)
  std::int64_t rows = 0;           // B of this microbatch
  bool packed = false;

  // Per row of the microbatch, in local order (ℓ entries each).
  std::vector<std::vector<std::int64_t>> index;  // global slot of each local token
  std::vector<std::vector<std::int64_t>>
      caller_pos;  // caller position of each local token; -1 = pad
  std::vector<std::vector<std::int64_t>> positions;   // position ids (computed before partitioning)
  std::vector<std::vector<std::int32_t>> doc_ids;     // 1-based document; 0 = row padding
  std::vector<std::vector<std::uint8_t>> real;        // 1 = real token, 0 = pad slot
  std::vector<std::vector<std::int64_t>> cu_seqlens;  // local cu_seqlens of layouts that keep
                                                      // whole local documents, else empty
  std::vector<std::int64_t> valid_tokens;             // real tokens held, per row

  // Packed rows: the stream's document bounds, per row.
  std::vector<std::vector<std::int64_t>> cu_seqlens_padded;
  // The parameters the layout's closed-form map needs beyond C and L, per row (empty for the
  // layouts whose map follows from C and L; layouts/layout_map.hpp validates them).
  std::vector<MapParams> map;

  // How the shard filled the slots it added, so that sharding the primary later (SPEC §4) pads the
  // same way without the LayoutSpec.
  PadPolicy pad_policy = PadPolicy::spec;
  std::int64_t pad_token_id = 0;

  // Per row: this rank's varlen attention segments, for layouts whose ranks attend through them
  // (LayoutAttention::varlen_segments); empty otherwise.
  std::vector<VarlenSegments> varlen;

  std::int64_t local_len() const { return cp > 0 ? padded_len / cp : 0; }
};

// Checks a recorded layout before code that indexes by it runs (a verb on a rank, a property
// reading an implementation's shard): the shape facts (1 <= C, rank < C, L a multiple of C, rows),
// every per-row array of ℓ entries, the index map inside [0, L) holding each slot once, caller
// positions inside [-1, S), and the document bounds, local cu_seqlens and varlen segments rising
// inside their streams. A wrong one throws naming `where`, the rank, the row, the entry and its
// value. One pass over each array: O(B·ℓ) per call.
void check_recorded_layout(const ShardLayout& layout, const char* where);

}  // namespace cplab
