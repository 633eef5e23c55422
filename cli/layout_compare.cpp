#include "cli/layout_compare.hpp"

#include <fmt/format.h>

#include "core/output_file.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {

bool asks_every_layout(const std::string& layout_arg) {
  return layout_arg == reports::kEveryLayout;
}

reports::Stories tell_layouts(const LayoutSpec& spec, const std::string& layout_arg,
                              const LayoutSourceArgs& args, reports::StoryDetail detail,
                              const sim::AttentionMask& mask) {
  const std::vector<std::string> names =
      asks_every_layout(layout_arg) ? reference::layout_names() : std::vector{layout_arg};
  const reports::RowPlanner plan_row = [&args](const LayoutSpec& one, bool as_is) {
    LayoutSourceArgs given = args;
    if (as_is) given.options = nullptr;  // the spec has them applied already
    LayoutSource source = read_layout_source(one, given);
    reports::PlannedRow planned{.spec = source.spec,
                                .row = std::move(source.rows[source.chosen]),
                                .labels = {},
                                .description = source.description};
    if (!source.labels.empty()) planned.labels = std::move(source.labels[source.chosen]);
    return planned;
  };
  return reports::tell_layouts(spec, names, plan_row, detail, mask);
}

int print_layout_comparison(const reports::Stories& stories, bool json,
                            const std::string& svg_path) {
  if (!svg_path.empty())
    write_output_file(svg_path, reports::explain_svg(stories.layouts, stories.source));
  if (json) {
    fmt::print("{}\n", reports::comparison_json(stories));
    return 0;
  }
  fmt::print("{}", reports::explain_text(stories.layouts, stories.source, false));
  if (!svg_path.empty()) fmt::print("picture: {}\n", svg_path);
  return 0;
}

}  // namespace cplab::cli
