#pragma once
// The tolerance CP attention is held to (SPEC §13.3), derived per element from the dtype's unit
// roundoff u, f32's u32, the head dim d, the row length L, the blocks a query merges n_b and the
// magnitudes of the row's inputs, and the comparison of one rank's results against it.
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "core/shard_plan.hpp"
#include "implementation/cp_attention.hpp"
#include "reference/cp_attention_reference.hpp"

namespace cplab::properties {

// Per row of the microbatch: the bounds every element of a part is held to (the gradients' also
// scale with each key's probability mass and the element's own magnitude, see tolerance_of).
struct RowBounds {
  double out = 0, lse = 0;
  double grad_q = 0;                        // + u·|dQ|
  double grad_k_mass = 0;                   // × the key's mass, + u·|dK|
  double grad_v_mass = 0;                   // × the key's mass, + u·|dV|
  double grad_k_lost = 0, grad_v_lost = 0;  // probabilities below f32's range, lost
  double u = 0;    // the dtype's unit roundoff (the final rounding of each gradient)
  double eta = 0;  // the dtype's absolute rounding error below its normal range
  // dK, dV: the same for each rounded copy of a KV head Ulysses repeats (0 when not repeated).
  double eta_kv = 0;
};
struct AttentionBounds {
  std::vector<RowBounds> rows;
};

AttentionBounds attention_bounds(const reference::CpAttentionReference& ref, const Tensor& q,
                                 const Tensor& k, const Tensor& v, const Tensor& grad_out,
                                 const std::vector<sim::AttentionSchedule>& schedules, DType dtype);

// The largest error seen per part, against its tolerance there.
struct BoundsReport {
  struct Worst {
    double error = 0, tolerance = 0, ratio = 0;
  };
  Worst parts[5];  // out, lse, dQ, dK, dV
  void record(int part, double error, double tolerance);
  std::string summary() const;  // "max |error| (tolerance): out 1e-3 (4e-3), ..."
};

// "" when rank r's results are within the bounds; else the first element that is not, by row,
// local token, global slot, head and element.
std::string compare_rank(const ShardPlan& plan, std::int64_t rank,
                         const reference::CpAttentionReference& ref, const AttentionBounds& bounds,
                         const CpAttentionOutput& got, const std::string& where,
                         BoundsReport& report);

}  // namespace cplab::properties
