#pragma once
// The attention matrix of one schedule (SPEC §13.2, §13.5), the figure engineers draw to explain
// ring attention and to debug it: query slots down, key slots across, every (query, key) pair a
// rank computes coloured by that rank and labelled with the step that computes it, pairs no rank
// computes (masked or skipped) grey, document boundaries drawn as lines and bidirectional spans
// as dashed ones. Past kMatrixCells slots a side, one cell stands for a block of slots (a
// block-level picture): its colour is the first rank that computes one of its pairs, lighter when
// other ranks compute some too. Every cell carries data-q, data-k, data-rank and data-step.
#include <cstdint>
#include <string>

#include "attention/schedule.hpp"

namespace cplab::reports {

inline constexpr std::int64_t kMatrixCells = 96;  // cells a side, at most
// The (query, key) positions of the computed blocks the picture walks one by one, masked ones
// included: a ring's causal row of L = 8192 walks about 2^25.
inline constexpr std::int64_t kMaxMatrixWalk = std::int64_t{1} << 26;

// `per_step`: one small matrix per step after the whole, each with only that step's pairs
// coloured (the small multiples of a ring; the walk counts twice). Throws cplab::Error past
// kMaxMatrixWalk.
std::string attention_matrix_svg(const sim::AttentionSchedule& schedule, const std::string& title,
                                 bool per_step);

// The matrix beside the work grid: attention_matrix_svg, or, for a row whose pairs are past
// kMaxMatrixWalk, a one-line picture that says so (the grid is drawn for any row).
std::string attention_matrix_svg_or_note(const sim::AttentionSchedule& schedule,
                                         const std::string& title, bool per_step);

}  // namespace cplab::reports
