#pragma once
// Every registered layout (or one) on the same row: the stories `cplab explain` tells, ranked by
// the critical path of their attention, and the side-by-side JSON of `cplab layout --layout all`.
// Where the row comes from (a length, document lengths, a batch file) is the caller's: it hands
// over a function that plans the row under a spec.
#include <functional>
#include <string>
#include <vector>

#include "core/attention_mask.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"
#include "reports/layout_explain.hpp"

namespace cplab::reports {

// The layout value that asks for every registered layout (`--layout all`, and the JSON's "layout").
inline constexpr const char* kEveryLayout = "all";

// One row planned under a spec: the spec with any automatic option resolved, the row's plan, its
// labels in the padded global stream (empty: none) and where it came from, for titles.
struct PlannedRow {
  LayoutSpec spec;
  RowPlan row;
  std::vector<std::int64_t> labels;
  std::string description;
};
// Plans the row under `spec`; throws cplab::Error when the layout cannot lay it out. The first
// call for a layout passes as_is = false: the caller may complete the spec first (options given as
// flags are applied once the row's length is known). The later calls try the planned spec with an
// option reset to its default, and pass as_is = true: plan exactly that spec.
using RowPlanner = std::function<PlannedRow(const LayoutSpec& spec, bool as_is)>;

struct Stories {
  std::vector<LayoutStory> layouts;
  std::string source;  // where the row came from ("batch.pt row 0 of 2 (packed, S=16)")
};

// Each layout of `names` with spec's other options, least critical path first, those that cannot
// lay out the row last with their reasons; when none can, the first reason is thrown. Each
// layout's plan is made, told at `detail` and released before the next one is made.
Stories tell_layouts(const LayoutSpec& spec, const std::vector<std::string>& names,
                     const RowPlanner& plan_row, StoryDetail detail,
                     const sim::AttentionMask& mask = {});

// `cplab layout --layout all --json`: one object with every layout's numbers.
std::string comparison_json(const Stories& stories);

}  // namespace cplab::reports
