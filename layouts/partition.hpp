#pragma once
// The rank-local partition of SPEC §3: what one rank holds of a microbatch, derived from the batch
// metadata every rank has (row length, documents) with the closed-form maps of index_math.hpp.
// Nothing here looks at another rank's data or calls the reference.
//
//   for (const MicrobatchRows& rows : microbatch_rows(spec, batch))
//     ShardLayout mine = partition_rank(spec, rank, rows);
//
// The steps a partition is made of (document padding, index maps, the order of a greedy
// assignment, local cu_seqlens, positions) are the virtual methods of PartitionRules, so an
// implementation under test can alter exactly one of them; partition_rank uses the standard rules
// unless given others. Nothing here knows a layout by name: it reads the layout's descriptor.
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_layout.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/layout_map.hpp"

namespace cplab::sim {

// One microbatch's rows as every rank sees them.
struct MicrobatchRows {
  std::int64_t rows = 0;        // B of the microbatch (1 for a packed microbatch)
  std::int64_t caller_len = 0;  // S
  bool packed = false;
  std::vector<std::int64_t> seq_lens;  // packed: real tokens of each document
  std::vector<std::int64_t>
      seq_lens_padded;  // packed: slots each occupies in the caller row (empty: seq_lens)
  // > 0: a fixed L, as a caller with a fixed row length asks (a layout that re-lays documents puts
  // the extra on the last document; the others accept only their own L). 0: the layout's own.
  std::int64_t pinned_len = 0;
};

// The padded global stream of one row, from the metadata alone (before any partitioning).
struct RowStream {
  std::string layout;
  const LayoutDescriptor* descriptor = nullptr;
  std::int64_t cp = 1;
  std::int64_t caller_len = 0;  // S
  std::int64_t padded_len = 0;  // L
  bool packed = false;
  // The layout re-laid every document at its own padded length (C > 1), so only real tokens come
  // from the caller row; otherwise the caller row stays as it is, padding appended at its end.
  bool relaid = false;
  // Packed rows: document i occupies stream slots [doc_bounds[i], doc_bounds[i+1]) and its first
  // doc_real[i] slots are real tokens, caller_start[i] is where the caller row holds them.
  std::vector<std::int64_t> doc_bounds;
  std::vector<std::int64_t> doc_real;
  std::vector<std::int64_t> caller_start;
  // Positions are stream indices (pads included) rather than offsets in each document.
  bool stream_positions = false;
  // What the layout's map needs beyond C and L (its descriptor's map.derive fills it, C > 1), and
  // for an assignment the cost of every unit it balanced.
  MapParams map;
  std::vector<std::int64_t> map_costs;
};

// Slots [begin, end) of a stream.
struct SlotSpan {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Per-slot facts of a stream, computed before partitioning (SPEC §1): what the caller row holds
// there, its position id and document id, and whether it is a real token.
struct StreamSlots {
  std::vector<std::int64_t> caller_pos;  // -1: a slot the layout added
  std::vector<std::int64_t> positions;
  std::vector<std::int32_t> doc_ids;  // 1-based; 0: row padding (BSHD: 1 on caller slots)
  std::vector<std::uint8_t> real;
};

// The steps every layout's partition is made of, each a hook on the pads, the map or what ranks
// hold besides tokens, never on one layout. A variant under test overrides exactly one.
class PartitionRules {
 public:
  virtual ~PartitionRules() = default;

  // The pads: the slots a re-laid document of `seq_len` real tokens occupies when its layout pads
  // documents to a multiple of `unit`: ceil_to(seq_len, unit).
  virtual std::int64_t document_slots(std::int64_t seq_len, std::int64_t unit) const;
  // The map: a rank's index map (global slot of each local token), from the closed-form map.
  virtual std::vector<std::int64_t> local_index(const RowStream& stream, const LayoutMap& map,
                                                std::int64_t rank) const;
  // The order a greedy assignment takes its units in (data-dependent maps): does unit a, of cost
  // cost_a, go before unit b? Larger cost first; equal costs: higher index first (SPEC §3).
  virtual bool balance_precedes(std::int64_t cost_a, std::int64_t a, std::int64_t cost_b,
                                std::int64_t b) const;
  // What ranks hold besides tokens (layouts with whole local documents): the local cu_seqlens
  // from the stream's document bounds (cu_seqlens_padded) and the real-token prefix sums
  // (cu_seqlens): cu_seqlens_padded / C.
  virtual std::vector<std::int64_t> local_cu_seqlens(const std::vector<std::int64_t>& doc_bounds,
                                                     const std::vector<std::int64_t>& cu_real,
                                                     std::int64_t cp) const;
  // Position ids of the local tokens: the stream's positions (computed before partitioning)
  // selected by the local index map.
  virtual std::vector<std::int64_t> local_positions(
      const StreamSlots& slots, const std::vector<std::int64_t>& local_index) const;
  // The mask a data-dependent assignment prices its units under, as the span of real keys of each
  // document in stream order: a real query sees its own document's span up to itself. Standard:
  // the model's document-causal mask (each document's real tokens in a packed row; [0, S) for a
  // BSHD row, one causal document).
  virtual std::vector<SlotSpan> balance_documents(const RowStream& stream) const;
  // What ranks attend through (layouts with varlen segments): rank `rank`'s cu_seqlens_q,
  // cu_seqlens_k and key slice of a stream of contiguous ranks, from the stream's document bounds
  // (row padding after the last document is one more segment), as
  // llama3_flash_attn_prepare_cu_seqlens defines them for causal attention (defined with the
  // layout that attends so, layouts/llama3_varlen.cpp).
  virtual VarlenSegments varlen_segments(const std::vector<std::int64_t>& doc_bounds,
                                         std::int64_t padded_len, std::int64_t cp,
                                         std::int64_t rank) const;
};

// The standard rules of SPEC §3.
const PartitionRules& standard_rules();

// Splits a batch's metadata into its microbatches (SPEC §4): B/microbatches BSHD rows each, or one
// packed row each (partitioned on its own, so thd rows may differ in L). Checks microbatches.
std::vector<MicrobatchRows> microbatch_rows(const LayoutSpec& spec, const Batch& batch);

// The stream of one row of the microbatch (row < rows; packed microbatches have one row).
RowStream row_stream(const LayoutSpec& spec, const MicrobatchRows& rows,
                     const PartitionRules& rules = standard_rules());
StreamSlots stream_slots(const RowStream& stream);
// The closed-form map of a stream, and rank r's index map of it.
LayoutMap stream_map(const RowStream& stream);
std::vector<std::int64_t> local_index(const RowStream& stream, std::int64_t rank,
                                      const PartitionRules& rules = standard_rules());

// The greedy min-heap assignment of SPEC §3 that data-dependent layouts share: units by cost
// (rules.balance_precedes), each to the least-loaded rank that still has room (equal loads: the
// lower rank), n/C per rank; each rank's units ascending.
std::vector<std::vector<std::int64_t>> greedy_assign(
    const std::vector<std::int64_t>& costs, std::int64_t cp,
    const PartitionRules& rules = standard_rules());

// What rank `rank` records for one microbatch (index maps, positions, document ids, real flags,
// caller positions, local cu_seqlens, and the parameters the closed-form map needs).
ShardLayout partition_rank(const LayoutSpec& spec, std::int64_t rank, const MicrobatchRows& rows,
                           const PartitionRules& rules = standard_rules());

}  // namespace cplab::sim
