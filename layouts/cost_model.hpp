#pragma once
// What a layout costs each rank on one microbatch: its causal work (SPEC §8) and the bytes each
// verb of the sim puts on the wire (ring collectives, wire_bytes.hpp). Computed from the batch
// metadata and the closed-form partition alone, so it can be compared with what ThreadComm
// measures when the verbs really run, and reported for load balance.
#include <cstdint>
#include <vector>

#include "core/layout_spec.hpp"
#include "layouts/partition.hpp"

namespace cplab::sim {

// Sizes of the tensors the verbs move.
struct CostShapes {
  std::int64_t token_elements =
      1;  // elements per token of a gathered token tensor (e.g. hidden size)
  std::int64_t element_bytes = 4;  // of that tensor and of its gradient
  std::int64_t head_dim = 64;      // attention: D of q, k, v (f32)
  std::int64_t loss_depth = 1;     // the loss's depth k (SPEC §6.1): targets k slots ahead
};

// Bytes one rank sends for one call of each verb on the whole microbatch.
struct VerbBytes {
  std::uint64_t shard = 0;  // every rank cuts its own tokens out of the batch it has: nothing moves
  std::uint64_t gather_token_tensor = 0;           // index maps, then the shards
  std::uint64_t gather_token_tensor_backward = 0;  // index maps, then a reduce-scatter
  std::uint64_t gather_tokens = 0;                 // one [ℓ, token_elements] tensor per row
  std::uint64_t gather_tokens_backward = 0;
  std::uint64_t loss_exchange = 0;  // (label, document) pairs sent to the ranks that need them
                                    // (16 bytes a target on another rank, one exchange a depth)
  std::uint64_t loss_count = 0;     // the all-reduce of N
  std::uint64_t attention = 0;      // key facts, K and V gathered; dK and dV reduced
};

struct RankCost {
  std::int64_t rank = 0;
  std::int64_t causal_work = 0;   // Σ over real queries of the real keys the mask lets them see
  std::int64_t valid_tokens = 0;  // real tokens held
  VerbBytes bytes;
};

// One entry per rank for a microbatch of `rows`.
std::vector<RankCost> rank_costs(const LayoutSpec& spec, const MicrobatchRows& rows,
                                 const CostShapes& shapes = {},
                                 const PartitionRules& rules = standard_rules());

// max / mean causal work (1 when there is none).
double work_imbalance(const std::vector<RankCost>& costs);

}  // namespace cplab::sim
