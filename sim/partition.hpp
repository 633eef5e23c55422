#pragma once
// The rank-local partition of SPEC §3: what one rank holds of a microbatch, derived from the batch
// metadata every rank has (row length, documents) with the closed-form maps of index_math.hpp.
// Nothing here looks at another rank's data or calls the reference.
//
//   for (const MicrobatchRows& rows : microbatch_rows(spec, batch))
//     ShardLayout mine = partition_rank(spec, rank, rows);
//
// The steps a partition is made of (document lengths, index maps, magi's chunk order, local
// cu_seqlens, positions) are the virtual methods of PartitionRules, so an implementation under
// test can alter exactly one of them; partition_rank uses the standard rules unless given others.
#include <cstdint>
#include <string>
#include <vector>

#include "reference/types/batch.hpp"
#include "reference/types/layout_spec.hpp"
#include "reference/types/shard_layout.hpp"

namespace cplab::sim {

// One microbatch's rows as every rank sees them.
struct MicrobatchRows {
  std::int64_t rows = 0;        // B of the microbatch (1 for a packed microbatch)
  std::int64_t caller_len = 0;  // S
  bool packed = false;
  std::vector<std::int64_t> seq_lens;  // packed: real tokens of each document
  std::vector<std::int64_t>
      seq_lens_padded;  // packed: slots each occupies in the caller row (empty: seq_lens)
  // > 0: a fixed L, as a caller with a fixed row length asks (thd puts the extra on the last
  // document; the other layouts accept only their own L). 0: the layout's own length.
  std::int64_t pinned_len = 0;
};

// The padded global stream of one row, from the metadata alone (before any partitioning).
struct RowStream {
  std::string layout;
  std::int64_t cp = 1;
  std::int64_t caller_len = 0;  // S
  std::int64_t padded_len = 0;  // L
  bool packed = false;
  // thd (C > 1) re-lays every document at its own padded length, so only real tokens come from the
  // caller row; the other layouts keep the caller row as it is and append padding at its end.
  bool relaid = false;
  // Packed rows: document i occupies stream slots [doc_bounds[i], doc_bounds[i+1]) and its first
  // doc_real[i] slots are real tokens, caller_start[i] is where the caller row holds them.
  std::vector<std::int64_t> doc_bounds;
  std::vector<std::int64_t> doc_real;
  std::vector<std::int64_t> caller_start;
  // magi (C > 1): chunk size, every chunk's attention area, and each rank's chunks ascending.
  std::int64_t chunk_size = 0;
  std::vector<std::int64_t> magi_areas;
  std::vector<std::vector<std::int64_t>> magi_chunks;
};

// Per-slot facts of a stream, computed before partitioning (SPEC §1): what the caller row holds
// there, its position id and document id, and whether it is a real token.
struct StreamSlots {
  std::vector<std::int64_t> caller_pos;  // -1: a slot the layout added
  std::vector<std::int64_t> positions;
  std::vector<std::int32_t> doc_ids;  // 1-based; 0: row padding (BSHD: 1 on caller slots)
  std::vector<std::uint8_t> real;
};

class PartitionRules {
 public:
  virtual ~PartitionRules() = default;

  // thd: the slots a document of `seq_len` real tokens occupies, ceil_to(seq_len, 2C).
  virtual std::int64_t thd_document_slots(std::int64_t seq_len, std::int64_t cp) const;
  // Local index maps (global slot of each local token) from the closed-form maps.
  virtual std::vector<std::int64_t> head_tail_local_index(std::int64_t cp, std::int64_t padded_len,
                                                          std::int64_t rank) const;
  virtual std::vector<std::int64_t> thd_local_index(const std::vector<std::int64_t>& doc_bounds,
                                                    std::int64_t cp, std::int64_t rank) const;
  // thd: the rank's local cu_seqlens from the stream's document bounds (cu_seqlens_padded) and
  // the real-token prefix sums (cu_seqlens): cu_seqlens_padded / C.
  virtual std::vector<std::int64_t> thd_local_cu_seqlens(
      const std::vector<std::int64_t>& doc_bounds, const std::vector<std::int64_t>& cu_real,
      std::int64_t cp) const;
  // magi's greedy order: does chunk a go before chunk b? Larger area first; equal areas: higher
  // chunk index first (SPEC §3).
  virtual bool magi_chunk_precedes(std::int64_t area_a, std::int64_t a, std::int64_t area_b,
                                   std::int64_t b) const;
  // Position ids of the local tokens: the stream's positions (computed before partitioning)
  // selected by the local index map.
  virtual std::vector<std::int64_t> local_positions(
      const StreamSlots& slots, const std::vector<std::int64_t>& local_index) const;
};

// The standard rules of SPEC §3.
const PartitionRules& standard_rules();

// Splits a batch's metadata into its microbatches (SPEC §4): B/num_chunks BSHD rows each, or one
// packed row each (partitioned on its own, so thd rows may differ in L). Checks num_chunks.
std::vector<MicrobatchRows> microbatch_rows(const LayoutSpec& spec, const Batch& batch);

// The stream of one row of the microbatch (row < rows; packed microbatches have one row).
RowStream row_stream(const LayoutSpec& spec, const MicrobatchRows& rows,
                     const PartitionRules& rules = standard_rules());
StreamSlots stream_slots(const RowStream& stream);
// Rank r's index map of a stream.
std::vector<std::int64_t> local_index(const RowStream& stream, std::int64_t rank,
                                      const PartitionRules& rules = standard_rules());

// magi: every chunk's attention area in closed form (sums of arithmetic series per document; the
// reference counts pairs instead), and the greedy min-heap assignment of SPEC §3.
std::vector<std::int64_t> magi_chunk_areas(const RowStream& stream);
std::vector<std::vector<std::int64_t>> magi_assign(const std::vector<std::int64_t>& areas,
                                                   std::int64_t cp,
                                                   const PartitionRules& rules = standard_rules());

// What rank `rank` records for one microbatch (index maps, positions, document ids, real flags,
// caller positions, local cu_seqlens, and the parameters the closed-form maps need).
ShardLayout partition_rank(const LayoutSpec& spec, std::int64_t rank, const MicrobatchRows& rows,
                           const PartitionRules& rules = standard_rules());

}  // namespace cplab::sim
