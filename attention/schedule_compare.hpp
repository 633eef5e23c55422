#pragma once
// Attention algorithms compared on one row (`cplab schedule --algo all`): each algorithm's
// schedule, or why the layout refuses it, and each one's place by critical path under the mask.
#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedule.hpp"

namespace cplab::sim {

// An algorithm the layout runs, with its schedule, or one it refuses, with why.
struct ScheduleOutcome {
  AttentionAlgo algo;
  std::string refused;
  AttentionSchedule schedule;
};

// Each of `algos` on the row. When `compared`, a refusal or a schedule past the walk's bound
// (ScheduleTooLarge) is that algorithm's outcome and the others go on; otherwise it is thrown.
std::vector<ScheduleOutcome> schedule_outcomes(const LayoutDescriptor& layout,
                                               const LayoutSpec& spec, const RowPlan& row,
                                               const std::vector<AttentionAlgo>& algos,
                                               const AttentionShape& shape,
                                               const AttentionMask& mask, bool compared);

// A schedule's place among the outcomes, by critical path under the mask (1: the shortest; ties
// share it; refused ones take none).
std::int64_t critical_path_place(const std::vector<ScheduleOutcome>& outcomes,
                                 const AttentionSchedule& schedule);

// The critical path against the ideal (1 when there is no work).
double critical_path_ratio(const AttentionSchedule& schedule);

}  // namespace cplab::sim
