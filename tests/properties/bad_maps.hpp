#pragma once
// A test implementation (not a registered mutant) that hands shared code wrong maps: `sim` whose
// last rank's maps run past L, repeat a slot or name a negative one wherever a map crosses into
// code it does not own: its partition (the index map it records), the slots it gathers by (token
// moves), the owners of its loss targets (the label exchange) and the layouts it hands the
// other verbs (attention, the backward, the Ulysses all-to-all, the MTP shift). Every property must
// fail on it with a shrunk counterexample, and nothing may be written through the wrong maps.
#include <string>

#include "sim/sim_implementation.hpp"

namespace cplab::testing {

enum class MapFault { past_end, repeat, negative };
std::string map_fault_name(MapFault fault);  // "past-end", "repeat", "negative"

// The fault applied to one map of slots in [0, len): the last entry becomes len (past the end),
// the last becomes the first (a slot named twice; maps of one entry keep it), or the first
// becomes -1.
void apply_map_fault(std::vector<std::int64_t>& map, std::int64_t len, MapFault fault);

class BadMapsImplementation final : public sim::SimImplementation {
 public:
  explicit BadMapsImplementation(MapFault fault) : fault_(fault) {}
  std::string name() const override { return "bad-maps-" + map_fault_name(fault_); }

 protected:
  // The verbs that take a layout from the caller hand the broken one to the standard twin's verbs,
  // whose checks it meets as any implementation's layout would (these hooks themselves are reached
  // only with the caller's layout checked).
  Tensor do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                const Batch& micro_batch) override;
  Tensor do_shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                               std::int64_t seq_dim, std::optional<double> fill) override;
  Tensor do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                         const Tensor& grad_gathered, std::int64_t seq_dim,
                                         bool trim) override;
  AttentionOutput do_attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& grad_out) override;
  Tensor do_shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               std::int64_t seq_dim, std::int64_t depth, double fill) override;
  Tensor do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               const UlyssesHeads& heads, HeadKind kind) override;
  Tensor do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                       const Tensor& gathered, const UlyssesHeads& heads,
                                       HeadKind kind) override;
  // The partition's index map.
  std::vector<std::int64_t> local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                                        std::int64_t rank) const override;
  // The slots gather_token_tensor puts the gathered tokens at.
  Tensor reorder_to_global(
      const Tensor& rank_ordered, std::int64_t seq_dim,
      const std::vector<std::vector<std::int64_t>>& gathered_slots) const override;
  // The owner of a loss target: its offset past ℓ, the slot before (a slot named twice), or -1.
  index_math::Slot target_owner(const sim::LayoutMap& map, std::int64_t slot, std::int64_t asking,
                                std::int64_t depth) const override;

 private:
  // The layout with row 0's index map broken when it is the last rank's.
  ShardLayout broken(const ShardLayout& layout) const;
  MapFault fault_;
  sim::SimImplementation standard_;
};

}  // namespace cplab::testing
