// The standard partition steps and the rank-local partition of one microbatch (SPEC §3-§4).
#include "layouts/partition.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <utility>

#include "core/error.hpp"
#include "core/map_checks.hpp"
#include "layouts/index_math.hpp"

namespace cplab::sim {

std::int64_t PartitionRules::document_slots(std::int64_t seq_len, std::int64_t unit) const {
  return index_math::ceil_to(seq_len, unit);
}

std::vector<std::int64_t> PartitionRules::local_index(const RowStream& /*stream*/,
                                                      const LayoutMap& map,
                                                      std::int64_t rank) const {
  return map.local_index(rank);
}

bool PartitionRules::balance_precedes(std::int64_t cost_a, std::int64_t a, std::int64_t cost_b,
                                      std::int64_t b) const {
  return cost_a != cost_b ? cost_a > cost_b : a > b;
}

std::vector<std::int64_t> PartitionRules::local_cu_seqlens(
    const std::vector<std::int64_t>& doc_bounds, const std::vector<std::int64_t>& /*cu_real*/,
    std::int64_t cp) const {
  std::vector<std::int64_t> local;
  for (std::int64_t bound : doc_bounds) local.push_back(bound / cp);
  return local;
}

std::vector<std::int64_t> PartitionRules::local_positions(
    const StreamSlots& slots, const std::vector<std::int64_t>& local_index) const {
  std::vector<std::int64_t> positions;
  for (std::int64_t g : local_index) positions.push_back(slots.positions[g]);
  return positions;
}

std::vector<SlotSpan> PartitionRules::balance_documents(const RowStream& stream) const {
  if (!stream.packed) return {{0, std::min(stream.caller_len, stream.padded_len)}};
  std::vector<SlotSpan> spans;
  for (std::size_t i = 0; i < stream.doc_real.size(); ++i)
    spans.push_back({stream.doc_bounds[i], stream.doc_bounds[i] + stream.doc_real[i]});
  return spans;
}

const PartitionRules& standard_rules() {
  static const PartitionRules rules;
  return rules;
}

std::vector<MicrobatchRows> microbatch_rows(const LayoutSpec& spec, const Batch& batch) {
  validate_batch(batch);
  CPLAB_CHECK(spec.microbatches >= 1,
              "pipeline microbatches must be at least 1, got microbatches={}", spec.microbatches);
  const std::int64_t rows = batch.rows(), len = batch.seq_len();
  std::vector<MicrobatchRows> out;
  if (!batch.packed()) {
    CPLAB_CHECK(rows % spec.microbatches == 0,
                "a batch of B={} rows does not split into microbatches={} equal microbatches (rows "
                "are never dropped)",
                rows, spec.microbatches);
    MicrobatchRows each;
    each.rows = rows / spec.microbatches;
    each.caller_len = len;
    out.assign(static_cast<std::size_t>(spec.microbatches), each);
    return out;
  }
  CPLAB_CHECK(
      rows == spec.microbatches,
      "packed batches hold exactly one packed row per microbatch: B={} rows for microbatches={}",
      rows, spec.microbatches);
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

LayoutMap stream_map(const RowStream& stream) {
  CPLAB_CHECK(stream.descriptor != nullptr, "a row stream of layout '{}' without its descriptor",
              stream.layout);
  return LayoutMap(*stream.descriptor, stream.cp, stream.padded_len, stream.map);
}

std::vector<std::int64_t> local_index(const RowStream& stream, std::int64_t rank,
                                      const PartitionRules& rules) {
  CPLAB_CHECK(rank >= 0 && rank < stream.cp, "rank {} out of range for cp={}", rank, stream.cp);
  return rules.local_index(stream, stream_map(stream), rank);
}

std::vector<std::vector<std::int64_t>> greedy_assign(const std::vector<std::int64_t>& costs,
                                                     std::int64_t cp, const PartitionRules& rules) {
  const auto units = static_cast<std::int64_t>(costs.size());
  CPLAB_CHECK(cp >= 1 && units % cp == 0, "{} units do not divide over cp={} ranks", units, cp);
  const std::int64_t per_rank = units / cp;
  // The standard order (cost descending, equal costs higher index first) sorted with an inline
  // comparison on (cost, unit) pairs next to each other in memory; the rules' own order (a hook
  // that mutants change) then only checks it, n calls instead of n log n, and sorts again where
  // it disagrees.
  struct Unit {
    std::int64_t cost, index;
  };
  std::vector<Unit> sorted(static_cast<std::size_t>(units));
  for (std::int64_t u = 0; u < units; ++u) sorted[u] = {costs[u], u};
  std::sort(sorted.begin(), sorted.end(), [](const Unit& a, const Unit& b) {
    return a.cost != b.cost ? a.cost > b.cost : a.index > b.index;
  });
  const auto precedes = [&](const Unit& a, const Unit& b) {
    return rules.balance_precedes(a.cost, a.index, b.cost, b.index);
  };
  if (!std::is_sorted(sorted.begin(), sorted.end(), precedes))
    std::sort(sorted.begin(), sorted.end(), precedes);
  // Min-heap of (load, rank): the least-loaded rank on top, equal loads the lower rank. A rank
  // leaves the heap once it holds its n/C units.
  using Entry = std::pair<std::int64_t, std::int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ranks;
  for (std::int64_t r = 0; r < cp; ++r) ranks.push({0, r});
  std::vector<std::int64_t> owner(static_cast<std::size_t>(units));
  std::vector<std::int64_t> held(static_cast<std::size_t>(cp), 0);
  for (const Unit& unit : sorted) {
    const auto [load, rank] = ranks.top();
    ranks.pop();
    owner[unit.index] = rank;
    if (++held[rank] < per_rank) ranks.push({load + unit.cost, rank});
  }
  // Each rank's units ascending: one pass over the units in index order, no sort.
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(cp));
  for (std::int64_t r = 0; r < cp; ++r) owned[r].reserve(static_cast<std::size_t>(per_rank));
  for (std::int64_t u = 0; u < units; ++u) owned[owner[u]].push_back(u);
  return owned;
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
  // The map step may be a variant's: each slot of the stream, once, before anything reads by it.
  const MapFault fault = find_map_fault(index, 0, len, true);
  CPLAB_CHECK(!fault, "{}: rank {}'s index map: {}", spec.layout, rank,
              describe_map_fault(fault, 0, len));
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
  std::vector<std::int64_t> cu_real = {0};
  for (std::int64_t n : stream.doc_real) cu_real.push_back(cu_real.back() + n);
  for (std::int64_t b = 0; b < rows.rows; ++b) {  // BSHD rows of a microbatch share one layout
    out.index.push_back(index);
    out.caller_pos.push_back(caller_pos);
    out.positions.push_back(positions);
    out.doc_ids.push_back(doc_ids);
    out.real.push_back(real);
    out.valid_tokens.push_back(valid);
    if (stream.descriptor->local_documents)
      out.cu_seqlens.push_back(rules.local_cu_seqlens(stream.doc_bounds, cu_real, cp));
    if (rows.packed) out.cu_seqlens_padded.push_back(stream.doc_bounds);
    out.map.push_back(stream.map);
    if (stream.descriptor->attention.varlen_segments)
      out.varlen.push_back(rules.varlen_segments(stream.doc_bounds, len, cp, rank));
  }
  // What the other steps gave (positions, cu_seqlens, segments) before a verb indexes by it.
  check_recorded_layout(out, "partition");
  return out;
}

}  // namespace cplab::sim
