// `cplab explain`: one row (a BSHD row, a packed row, or a row of a torch.save batch) under one
// layout or every registered one, rank by rank: tokens, documents, pads, the loss targets each rank
// fetches and from whom, counts, causal work and bytes per verb. Text, SVG or one HTML page.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <memory>

#include "cli/command.hpp"
#include "cli/layout_compare.hpp"
#include "cli/layout_flags.hpp"
#include "cli/mask_source.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {
namespace {

struct ExplainArgs {
  LayoutFlags flags;
  std::string layout, format = "text", out, mask = "causal";
};

int run_explain(const ExplainArgs& args) {
  CPLAB_CHECK(args.format == "text" || args.format == "svg" || args.format == "html",
              "--format '{}': expected text, svg or html", args.format);
  // The pictures draw every slot; the text needs the rank lists only.
  const reports::Stories stories = tell_layouts(
      args.flags.spec, args.layout, args.flags.given(),
      args.format == "text" ? reports::StoryDetail::text : reports::StoryDetail::picture,
      read_mask(args.mask, args.flags.given()));
  std::string text;
  if (args.format == "svg") {
    text = reports::explain_svg(stories.layouts, stories.source);
  } else if (args.format == "html") {
    text = reports::explain_html(stories.layouts, stories.source);
  } else {
    text = reports::explain_text(stories.layouts, stories.source, true);
  }
  if (args.out.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  write_output_file(args.out, text);
  fmt::print("{}: {}\n", args.format, args.out);
  return 0;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* sub = app.add_subcommand(
      "explain", "Tell rank by rank how a layout (or every layout) lays out one row");
  sub->add_option("--layout", args->layout,
                  fmt::format("Layout: {}, or all (side by side)",
                              fmt::join(reference::layout_names(), ", ")))
      ->required();
  sub->add_option("--cp", args->flags.spec.cp, "CP size C (ranks in the group)")->required();
  add_row_flags(sub, args->flags, "With --batch: the row (default 0)");
  sub->add_option("--format", args->format, "text, svg or html")->capture_default_str();
  sub->add_option("--out", args->out, "Write to this file instead of stdout");
  sub->add_option(
         "--mask", args->mask,
         "Count each rank's work under this attention mask: causal (doc-causal), "
         "window:W, chunked:K, bidirectional:B-E[,B-E...] or bidirectional:key=NAME (spans from "
         "a --batch key)")
      ->capture_default_str();
  add_layout_option_flags(sub, args->flags);
  return {sub, [args] { return run_explain(*args); }};
}

}  // namespace cplab::cli
