#pragma once
// A self-contained SVG picture of one row's CP layout, for an engineer whose loss curve looks wrong
// and who wants to see which rank got which token. Drawn from a RowPlan and the per-rank causal
// work only, so any caller that can plan a row (CLI, sweep reports, tests) can draw it.
//
// The picture, top to bottom: a title; the global stream [0, L) coloured by owning rank, with a
// thin strip under it coloured by document; one band per rank with its local tokens in local order,
// each cell coloured by document (document padding hatched over the document's tint, row padding
// grey cross-hatched), labelled with its global index when the cell is wide enough, a dark tick
// where the local stream jumps in global index; on the right of each band its valid tokens, causal
// work and a work bar against the mean; then a legend. Every band cell carries data-rank, data-g
// (global slot) and data-doc attributes and a hover title, so tools and people can read it back.
#include <cstdint>
#include <string>
#include <vector>

#include "core/shard_plan.hpp"

namespace cplab::reports {

// Fill of real tokens of document `doc` (1-based; BSHD rows are all document 1). A cycle of nine
// categorical colours: consecutive documents never share one.
std::string document_colour(std::int32_t doc);
// Fill of the pad slots of document `doc` (a hatch pattern over its tint), and of row padding.
std::string document_pad_fill(std::int32_t doc);
std::string row_pad_fill();
// Fill of rank r of C on the owner strip: a sequential ramp, so rank order reads as lightness and
// head-tail's 0..C-1..0 pattern shows as a ramp up and down.
std::string rank_colour(std::int64_t rank, std::int64_t cp);

// What `cplab explain` adds to the picture: per rank and local slot, where its loss target is.
enum class TargetMark : std::uint8_t {
  local,    // the next token is on this rank
  fetched,  // the next token is on another rank: fetched from its owner (a red notch)
  none,     // no target: document end, IGNORE label or padding (a grey bar)
};
using TargetMarks = std::vector<std::vector<TargetMark>>;  // [C][ℓ]

// `work[r]` is rank r's causal work (reference::causal_work). `title` heads the picture (layout,
// C and where the row came from). `marks` (optional) adds the loss targets to the bands. Throws
// cplab::Error when the plan, work and marks disagree in shape.
std::string layout_svg(const RowPlan& row, const std::vector<std::int64_t>& work,
                       const std::string& title, const TargetMarks* marks = nullptr);
// Several pictures one under the other in one SVG (ids kept apart), for layouts side by side.
std::string stack_svgs(const std::vector<std::string>& pictures);
// A picture's ids prefixed so that several can share one page.
std::string prefix_svg_ids(const std::string& svg, const std::string& prefix);
// A picture draws every slot of the row: above this many (a 1M-token row already makes a 220 MB
// SVG) it is refused, before anything is kept for it, with one line that says what to do instead.
inline constexpr std::int64_t kMaxPictureSlots = std::int64_t{1} << 20;
void check_picture_slots(std::int64_t padded_len);
// layout_svg written to path; throws cplab::Error naming the path when it cannot be written.
void write_layout_svg(const std::string& path, const RowPlan& row,
                      const std::vector<std::int64_t>& work, const std::string& title);

}  // namespace cplab::reports
