#pragma once
// Every registered layout (or one) on the same row: the stories `cplab explain` tells and the
// side-by-side table `cplab layout --layout all` prints.
#include <string>
#include <vector>

#include "cli/layout_source.hpp"
#include "reports/layout_explain.hpp"

namespace cplab::cli {

// The --layout value that asks for every registered layout.
inline constexpr const char* kEveryLayout = "all";
bool asks_every_layout(const std::string& layout_arg);

struct Stories {
  std::vector<reports::LayoutStory> layouts;
  std::string source;  // where the row came from ("batch.pt row 0 of 2 (packed, S=16)")
};

// `spec.layout` is one registered name, or kEveryLayout: each registered layout with spec's other
// options. A layout that cannot lay out the row is a story with its reason; when none can (or the
// one asked for cannot), the first reason is thrown. Each layout's plan is made, told at `detail`
// and released before the next one is made.
Stories tell_layouts(const LayoutSpec& spec, const std::string& layout_arg,
                     const LayoutSourceArgs& args, reports::StoryDetail detail,
                     const sim::AttentionMask& mask = {});

// `cplab layout --layout all`: the table (or, with json, one object with every layout) and, with
// svg_path, the pictures one under the other.
int print_layout_comparison(const Stories& stories, bool json, const std::string& svg_path);

}  // namespace cplab::cli
