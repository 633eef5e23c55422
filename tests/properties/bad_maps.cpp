#include "tests/properties/bad_maps.hpp"

#include "core/error.hpp"

namespace cplab::testing {
namespace {

// Only the last rank breaks its maps, so that a failure names one rank whichever thread is first.
bool on_last_rank() {
  const RankTag& tag = current_rank_tag();
  return tag.rank >= 0 && tag.rank == tag.size - 1;
}

}  // namespace

std::string map_fault_name(MapFault fault) {
  switch (fault) {
    case MapFault::past_end:
      return "past-end";
    case MapFault::repeat:
      return "repeat";
    case MapFault::negative:
      return "negative";
  }
  return "?";
}

void apply_map_fault(std::vector<std::int64_t>& map, std::int64_t len, MapFault fault) {
  if (map.empty()) return;
  switch (fault) {
    case MapFault::past_end:
      map.back() = len;
      return;
    case MapFault::repeat:
      map.back() = map.front();
      return;
    case MapFault::negative:
      map.front() = -1;
      return;
  }
}

ShardLayout BadMapsImplementation::broken(const ShardLayout& layout) const {
  ShardLayout out = layout;
  if (layout.rank == layout.cp - 1 && !out.index.empty())
    apply_map_fault(out.index.front(), layout.padded_len, fault_);
  return out;
}

Tensor BadMapsImplementation::do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                                     const Batch& micro_batch) {
  return standard_.shard_primary_later(comm, broken(layout), micro_batch);
}

Tensor BadMapsImplementation::do_shard_token_tensor(Comm& comm, const ShardLayout& layout,
                                                    const Tensor& value, std::int64_t seq_dim,
                                                    std::optional<double> fill) {
  return standard_.shard_token_tensor(comm, broken(layout), value, seq_dim, fill);
}

Tensor BadMapsImplementation::do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                                              const Tensor& grad_gathered,
                                                              std::int64_t seq_dim, bool trim) {
  return standard_.gather_token_tensor_backward(comm, broken(layout), grad_gathered, seq_dim, trim);
}

AttentionOutput BadMapsImplementation::do_attention(Comm& comm, const ShardLayout& layout,
                                                    const Tensor& q, const Tensor& k,
                                                    const Tensor& v, const Tensor& grad_out) {
  return standard_.attention(comm, broken(layout), q, k, v, grad_out);
}

Tensor BadMapsImplementation::do_shift_token_tensor(Comm& comm, const ShardLayout& layout,
                                                    const Tensor& local, std::int64_t seq_dim,
                                                    std::int64_t depth, double fill) {
  return standard_.shift_token_tensor(comm, broken(layout), local, seq_dim, depth, fill);
}

Tensor BadMapsImplementation::do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout,
                                                    const Tensor& local, const UlyssesHeads& heads,
                                                    HeadKind kind) {
  return standard_.ulysses_all_to_all(comm, broken(layout), local, heads, kind);
}

Tensor BadMapsImplementation::do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                                            const Tensor& gathered,
                                                            const UlyssesHeads& heads,
                                                            HeadKind kind) {
  return standard_.ulysses_all_to_all_inverse(comm, broken(layout), gathered, heads, kind);
}

std::vector<std::int64_t> BadMapsImplementation::local_index(const sim::RowStream& stream,
                                                             const sim::LayoutMap& map,
                                                             std::int64_t rank) const {
  std::vector<std::int64_t> index = SimImplementation::local_index(stream, map, rank);
  if (rank == stream.cp - 1) apply_map_fault(index, stream.padded_len, fault_);
  return index;
}

Tensor BadMapsImplementation::reorder_to_global(
    const Tensor& rank_ordered, std::int64_t seq_dim,
    const std::vector<std::vector<std::int64_t>>& gathered_slots) const {
  std::vector<std::vector<std::int64_t>> slots = gathered_slots;
  if (on_last_rank() && !slots.empty()) {
    const auto stream_len = static_cast<std::int64_t>(slots.front().size());
    apply_map_fault(slots.front(), stream_len, fault_);
  }
  return SimImplementation::reorder_to_global(rank_ordered, seq_dim, slots);
}

index_math::Slot BadMapsImplementation::target_owner(const sim::LayoutMap& map, std::int64_t slot,
                                                     std::int64_t asking,
                                                     std::int64_t depth) const {
  if (!on_last_rank()) return SimImplementation::target_owner(map, slot, asking, depth);
  switch (fault_) {
    case MapFault::past_end:
      return {SimImplementation::target_owner(map, slot, asking, depth).rank, map.local_len()};
    case MapFault::repeat:  // the slot before: the token's own, already named by it
      return SimImplementation::target_owner(map, slot - 1, asking, depth);
    case MapFault::negative:
      return {SimImplementation::target_owner(map, slot, asking, depth).rank, -1};
  }
  return SimImplementation::target_owner(map, slot, asking, depth);
}

}  // namespace cplab::testing
