#pragma once
// Row bookkeeping every layout shares: reading the caller's row, the per-slot facts of the padded
// stream (caller position, position id, document id, real flag), and turning each rank's list of
// slot ranges into its index map. A layout file only decides L and which ranges each rank gets, so
// the layouts cannot drift apart on the rest.
#include <cstdint>
#include <vector>

#include "core/shard_plan.hpp"

namespace cplab::reference::row_stream {

// ceil_to(x, m) of SPEC §0 (x >= 0, m >= 1).
std::int64_t ceil_to(std::int64_t x, std::int64_t m);

// The caller's row: S, and for a packed row its documents at their caller offsets.
struct CallerRow {
  std::int64_t len = 0;  // S
  bool packed = false;
  std::vector<std::int64_t> seq_lens;         // real tokens of each document
  std::vector<std::int64_t> seq_lens_padded;  // slots each occupies in the caller row
  std::vector<std::int64_t> starts;  // caller offset of each document: cumsum(seq_lens_padded)

  std::int64_t documents() const { return static_cast<std::int64_t>(seq_lens.size()); }
};

// Validates and reads a row: S >= 0; documents of non-negative length, each occupying at least its
// length (seq_lens_padded null or empty: exactly its length), all fitting in S.
CallerRow read_caller_row(std::int64_t caller_len, const std::vector<std::int64_t>* seq_lens,
                          const std::vector<std::int64_t>* seq_lens_padded);

// L of a layout whose own length is `natural`, when a batch pins every row to `pinned` (0: none).
std::int64_t resolve_padded_len(const char* layout, std::int64_t natural, std::int64_t pinned);

// The caller row with padding appended at its end up to padded_len (identity, contiguous,
// head-tail, magi), everything but the index maps:
//   BSHD:   caller_pos g (< S), positions arange(L), doc id 1 on caller slots and 0 on added pads,
//           real = g < S, original_len = S.
//   packed: documents at their caller offsets; positions restart at 0 per document and run through
//           its padding; row padding (the caller's and the added) continues the previous slot's
//           position and has doc id 0; real = the first seq_lens[i] slots of each document;
//           cu_seqlens_padded = [0, cumsum(seq_lens_padded)]; original_len = -1.
RowPlan end_padded_stream(const CallerRow& caller, std::int64_t cp, std::int64_t padded_len);

struct SlotRange {
  std::int64_t begin;
  std::int64_t end;  // exclusive
};

// index[r] = rank r's ranges concatenated in order. Checks that every rank holds L/C slots and that
// the ranks together hold every slot exactly once; fills valid_tokens.
void assign_ranges(RowPlan& row, const std::vector<std::vector<SlotRange>>& ranges);
// The same for runs of `width` slots dealt round robin: rank r holds [j·C·w + r·w, j·C·w + r·w + w)
// for j = 0, 1, ... (L a multiple of C·w), without listing ranges (a range per slot cost 16 bytes
// a token and most of the planning time).
void assign_round_robin(RowPlan& row, std::int64_t width);

// CP off: the caller row as it is on one rank, nothing padded. Every layout at C = 1 returns this
// (SPEC §3), so a pinned length other than S is an error.
RowPlan identity_plan(const CallerRow& caller, std::int64_t pinned);

}  // namespace cplab::reference::row_stream
