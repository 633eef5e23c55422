#pragma once
// `--layout all` on the command line: every registered layout (or one) on the row the layout
// flags describe, compared by reports/layout_compare.hpp; the stories `cplab explain` tells and
// the side-by-side table, JSON and pictures `cplab layout --layout all` prints.
#include <string>

#include "cli/layout_source.hpp"
#include "reports/layout_compare.hpp"

namespace cplab::cli {

bool asks_every_layout(const std::string& layout_arg);

// `layout_arg` is one registered name, or reports::kEveryLayout: each registered layout with
// spec's other options, planned on the row args describe.
reports::Stories tell_layouts(const LayoutSpec& spec, const std::string& layout_arg,
                              const LayoutSourceArgs& args, reports::StoryDetail detail,
                              const sim::AttentionMask& mask = {});

// `cplab layout --layout all`: the table (or, with json, one object with every layout) and, with
// svg_path, the pictures one under the other.
int print_layout_comparison(const reports::Stories& stories, bool json,
                            const std::string& svg_path);

}  // namespace cplab::cli
