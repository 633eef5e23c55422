// `cplab explain`: one row (a BSHD row, a packed row, or a row of a torch.save batch) under one
// layout or every registered one, rank by rank: tokens, documents, pads, the loss targets each rank
// fetches and from whom, counts, causal work and bytes per verb. Text, SVG or one HTML page.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <memory>

#include "cli/command.hpp"
#include "cli/layout_compare.hpp"
#include "reference/plan.hpp"
#include "reference/types/error.hpp"

namespace cplab::cli {
namespace {

struct ExplainArgs {
  LayoutSpec spec;
  MagiOptions magi;
  std::string layout, format = "text", out;
  LayoutSourceArgs source;
  CLI::Option* seq_len = nullptr;
  CLI::Option* doc_lens = nullptr;
  CLI::Option* batch = nullptr;
  CLI::Option* row = nullptr;
};

int run_explain(const ExplainArgs& args) {
  CPLAB_CHECK(args.format == "text" || args.format == "svg" || args.format == "html",
              "--format '{}': expected text, svg or html", args.format);
  LayoutSourceArgs source = args.source;
  source.has_seq_len = args.seq_len->count() > 0;
  source.has_doc_lens = args.doc_lens->count() > 0;
  source.has_batch = args.batch->count() > 0;
  source.has_row = args.row->count() > 0;
  source.magi = &args.magi;
  // The pictures draw every slot; the text needs the rank lists only.
  const Stories stories = tell_layouts(
      args.spec, args.layout, source,
      args.format == "text" ? reports::StoryDetail::text : reports::StoryDetail::picture);
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
  std::ofstream out(args.out, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write '{}'", args.out);
  out << text;
  out.close();
  CPLAB_CHECK(out.good(), "short write to '{}'", args.out);
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
  sub->add_option("--cp", args->spec.cp, "CP size C (ranks in the group)")->required();
  args->seq_len = sub->add_option("--seq-len", args->source.seq_len, "Length S of one BSHD row");
  args->doc_lens = sub->add_option("--doc-lens", args->source.doc_lens,
                                   "One packed row: document lengths back to back, e.g. 5,3,8");
  args->batch = sub->add_option("--batch", args->source.batch_path,
                                "A batch saved with torch.save (packed rows when it has seq_lens)");
  args->row = sub->add_option("--row", args->source.row, "With --batch: the row (default 0)");
  sub->add_option("--pad-multiple", args->spec.pad_multiple, "contiguous: pad multiple m (D = C·m)")
      ->capture_default_str();
  add_magi_options(sub, args->magi);
  sub->add_option("--ring-degree", args->spec.ring_degree,
                  "usp: ring degree R (U = C/R Ulysses degree; R must divide C)")
      ->capture_default_str();
  sub->add_option("--format", args->format, "text, svg or html")->capture_default_str();
  sub->add_option("--out", args->out, "Write to this file instead of stdout");
  sub->add_option("--block-size", args->spec.block_size,
                  "ptrr: block size B (L is padded to a multiple of B; L/B must divide by C)")
      ->capture_default_str();
  return {sub, [args] { return run_explain(*args); }};
}

}  // namespace cplab::cli
