#pragma once
// A picture of a CP attention schedule (SPEC §13): one row per step, one cell per rank, each cell
// shaded by the rank's work at that step against the largest cell, labelled with its work and
// its blocks; the step's largest cell, which the critical path sums, is outlined. Every cell
// carries data-step, data-rank and data-work attributes and a hover title.
#include <string>

#include "attention/schedule.hpp"

namespace cplab::reports {

std::string schedule_svg(const sim::AttentionSchedule& schedule, const std::string& title);
// One self-contained HTML page: a title, the pictures (already stacked) and the table as text.
std::string schedule_page(const std::string& title, const std::string& svg,
                          const std::string& table);

}  // namespace cplab::reports
