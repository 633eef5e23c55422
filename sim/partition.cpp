// The standard partition steps and the rank-local partition of one microbatch (SPEC §3-§4).
#include "sim/partition.hpp"

#include <algorithm>

#include "reference/types/error.hpp"
#include "sim/index_math.hpp"
#include "sim/row_map.hpp"

namespace cplab::sim {

std::int64_t PartitionRules::thd_document_slots(std::int64_t seq_len, std::int64_t cp) const {
  return index_math::ceil_to(seq_len, 2 * cp);
}

std::vector<std::int64_t> PartitionRules::head_tail_local_index(std::int64_t cp,
                                                                std::int64_t padded_len,
                                                                std::int64_t rank) const {
  const index_math::HeadTailMap map{cp, padded_len};
  std::vector<std::int64_t> index(static_cast<std::size_t>(map.local_len()));
  for (std::int64_t k = 0; k < map.local_len(); ++k) index[k] = map.global_index(rank, k);
  return index;
}

std::vector<std::int64_t> PartitionRules::thd_local_index(
    const std::vector<std::int64_t>& doc_bounds, std::int64_t cp, std::int64_t rank) const {
  const index_math::ThdMap map{cp, doc_bounds.data(),
                               static_cast<std::int64_t>(doc_bounds.size()) - 1};
  std::vector<std::int64_t> index(static_cast<std::size_t>(map.local_len()));
  for (std::int64_t k = 0; k < map.local_len(); ++k) index[k] = map.global_index(rank, k);
  return index;
}

std::vector<std::int64_t> PartitionRules::thd_local_cu_seqlens(
    const std::vector<std::int64_t>& doc_bounds, const std::vector<std::int64_t>& /*cu_real*/,
    std::int64_t cp) const {
  std::vector<std::int64_t> local;
  for (std::int64_t bound : doc_bounds) local.push_back(bound / cp);
  return local;
}

bool PartitionRules::magi_chunk_precedes(std::int64_t area_a, std::int64_t a, std::int64_t area_b,
                                         std::int64_t b) const {
  return area_a != area_b ? area_a > area_b : a > b;
}

std::vector<std::int64_t> PartitionRules::local_positions(
    const StreamSlots& slots, const std::vector<std::int64_t>& local_index) const {
  std::vector<std::int64_t> positions;
  for (std::int64_t g : local_index) positions.push_back(slots.positions[g]);
  return positions;
}

const PartitionRules& standard_rules() {
  static const PartitionRules rules;
  return rules;
}

std::vector<MicrobatchRows> microbatch_rows(const LayoutSpec& spec, const Batch& batch) {
  validate_batch(batch);
  CPLAB_CHECK(spec.num_chunks >= 1, "pipeline microbatches must be at least 1, got num_chunks={}",
              spec.num_chunks);
  const std::int64_t rows = batch.rows(), len = batch.seq_len();
  std::vector<MicrobatchRows> out;
  if (!batch.packed()) {
    CPLAB_CHECK(rows % spec.num_chunks == 0,
                "a batch of B={} rows does not split into num_chunks={} equal microbatches (rows "
                "are never dropped)",
                rows, spec.num_chunks);
    MicrobatchRows each;
    each.rows = rows / spec.num_chunks;
    each.caller_len = len;
    out.assign(static_cast<std::size_t>(spec.num_chunks), each);
    return out;
  }
  CPLAB_CHECK(
      rows == spec.num_chunks,
      "packed batches hold exactly one packed row per microbatch: B={} rows for num_chunks={}",
      rows, spec.num_chunks);
  // Each packed row is partitioned on its own (SPEC §4): thd rows may differ in L.
  for (std::size_t b = 0; b < batch.seq_lens.size(); ++b) {
    MicrobatchRows row;
    row.caller_len = len;
    row.rows = 1;
    row.packed = true;
    row.seq_lens = batch.seq_lens[b];
    if (b < batch.seq_lens_padded.size()) row.seq_lens_padded = batch.seq_lens_padded[b];
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<std::int64_t> local_index(const RowStream& stream, std::int64_t rank,
                                      const PartitionRules& rules) {
  const std::int64_t cp = stream.cp, len = stream.padded_len;
  CPLAB_CHECK(rank >= 0 && rank < cp, "rank {} out of range for cp={}", rank, cp);
  if (cp > 1 && stream.layout == "head-tail") return rules.head_tail_local_index(cp, len, rank);
  if (cp > 1 && stream.layout == "thd") return rules.thd_local_index(stream.doc_bounds, cp, rank);
  std::vector<std::int64_t> rank_chunks;
  for (const auto& chunks : stream.magi_chunks)
    rank_chunks.insert(rank_chunks.end(), chunks.begin(), chunks.end());
  const RowMap map(stream.layout, cp, len, stream.doc_bounds, std::move(rank_chunks),
                   stream.chunk_size);
  std::vector<std::int64_t> index(static_cast<std::size_t>(map.local_len()));
  for (std::int64_t k = 0; k < map.local_len(); ++k) index[k] = map.global_index(rank, k);
  return index;
}

ShardLayout partition_rank(const LayoutSpec& spec, std::int64_t rank, const MicrobatchRows& rows,
                           const PartitionRules& rules) {
  const RowStream stream = row_stream(spec, rows, rules);
  const StreamSlots slots = stream_slots(stream);
  const std::vector<std::int64_t> index = local_index(stream, rank, rules);
  const std::int64_t len = stream.padded_len, cp = stream.cp;
  CPLAB_CHECK(static_cast<std::int64_t>(index.size()) * cp == len,
              "{}: rank {} holds {} slots; every rank must hold L/C = {}/{}", spec.layout, rank,
              index.size(), len, cp);
  for (std::int64_t g : index) {
    CPLAB_CHECK(g >= 0 && g < len, "{}: rank {} given slot {} outside the stream of L={}",
                spec.layout, rank, g, len);
  }
  ShardLayout out;
  out.layout = spec.layout;
  out.cp = cp;
  out.rank = rank;
  out.padded_len = len;
  out.original_len = rows.packed ? -1 : rows.caller_len;
  out.caller_len = rows.caller_len;
  out.rows = rows.rows;
  out.packed = rows.packed;
  out.pad_policy = spec.pad_policy;
  out.pad_token_id = spec.pad_token_id;
  std::vector<std::int64_t> caller_pos, positions = rules.local_positions(slots, index);
  std::vector<std::int32_t> doc_ids;
  std::vector<std::uint8_t> real;
  std::int64_t valid = 0;
  for (std::int64_t g : index) {
    caller_pos.push_back(slots.caller_pos[g]);
    doc_ids.push_back(slots.doc_ids[g]);
    real.push_back(slots.real[g]);
    valid += slots.real[g];
  }
  std::vector<std::int64_t> rank_chunks;
  for (const auto& chunks : stream.magi_chunks)
    rank_chunks.insert(rank_chunks.end(), chunks.begin(), chunks.end());
  std::vector<std::int64_t> cu_real = {0};
  for (std::int64_t n : stream.doc_real) cu_real.push_back(cu_real.back() + n);
  for (std::int64_t b = 0; b < rows.rows; ++b) {  // BSHD rows of a microbatch share one layout
    out.index.push_back(index);
    out.caller_pos.push_back(caller_pos);
    out.positions.push_back(positions);
    out.doc_ids.push_back(doc_ids);
    out.real.push_back(real);
    out.valid_tokens.push_back(valid);
    if (spec.layout == "thd")
      out.cu_seqlens.push_back(rules.thd_local_cu_seqlens(stream.doc_bounds, cu_real, cp));
    if (rows.packed) out.cu_seqlens_padded.push_back(stream.doc_bounds);
    if (!rank_chunks.empty()) out.magi_rank_chunks.push_back(rank_chunks);
  }
  if (!rank_chunks.empty()) out.chunk_size = stream.chunk_size;
  return out;
}

}  // namespace cplab::sim
