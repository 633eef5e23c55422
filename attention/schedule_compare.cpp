#include "attention/schedule_compare.hpp"

#include "core/error.hpp"

namespace cplab::sim {

std::vector<ScheduleOutcome> schedule_outcomes(const LayoutDescriptor& layout,
                                               const LayoutSpec& spec, const RowPlan& row,
                                               const std::vector<AttentionAlgo>& algos,
                                               const AttentionShape& shape,
                                               const AttentionMask& mask, bool compared) {
  std::vector<ScheduleOutcome> outcomes;
  for (AttentionAlgo algo : algos) {
    ScheduleOutcome o{
        .algo = algo, .refused = schedule_refusal(layout, spec, algo, shape), .schedule = {}};
    CPLAB_CHECK(o.refused.empty() || compared, "{}", o.refused);
    if (o.refused.empty()) {
      try {
        o.schedule = build_schedule(layout, spec, row, algo, shape, mask);
      } catch (const ScheduleTooLarge& e) {
        if (!compared) throw;
        o.refused = e.what();
      }
    }
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

std::int64_t critical_path_place(const std::vector<ScheduleOutcome>& outcomes,
                                 const AttentionSchedule& schedule) {
  std::int64_t shorter = 0;
  for (const ScheduleOutcome& o : outcomes)
    shorter += o.refused.empty() && o.schedule.critical_path < schedule.critical_path;
  return shorter + 1;
}

double critical_path_ratio(const AttentionSchedule& schedule) {
  return schedule.ideal > 0 ? static_cast<double>(schedule.critical_path) / schedule.ideal : 1.0;
}

}  // namespace cplab::sim
