#pragma once
// `cplab schedule`'s answers in words and numbers (SPEC §13): the step × rank table of one
// schedule, the table that compares algorithms, and the JSON (streamed: a long row on stripe lists
// every slot of every buffer as its own range). The pictures are schedule_svg.hpp and
// attention_matrix_svg.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedule_compare.hpp"
#include "core/layout_spec.hpp"
#include "reports/json_text.hpp"

namespace cplab::reports {

// One schedule: a headline, then one line per step and rank (its exchange, blocks, work, bytes).
std::string schedule_table(const LayoutSpec& spec, const sim::AttentionSchedule& schedule);

// Every algorithm asked for: its steps, critical path against the ideal, the busiest rank's bytes
// and its place; a refused one with why.
std::string comparison_table(const LayoutSpec& spec, const sim::AttentionMask& mask,
                             const std::vector<sim::ScheduleOutcome>& outcomes);

// The JSON lists every slot range of every block (stripe's buffers are all single slots): bounded
// so that a long row cannot fill a disk; the table and the picture have no such size.
inline constexpr std::int64_t kMaxJsonRanges = std::int64_t{1} << 24;

// Refuses (cplab::Error) outcomes whose JSON would list more than kMaxJsonRanges slot ranges, so
// that the refusal comes before any output.
void check_json_size(const std::vector<sim::ScheduleOutcome>& outcomes);

// One schedule's object, or, when `compared`, the row's head with every outcome in "algos" (each
// with its place by critical path, a refused one with why); then a newline.
void schedule_json(JsonSink& out, const LayoutSpec& spec, std::int64_t padded_len,
                   const sim::AttentionMask& mask,
                   const std::vector<sim::ScheduleOutcome>& outcomes, bool compared);

}  // namespace cplab::reports
