// `cplab schedule`: how CP attention runs step by step on one row under a layout (SPEC §13): per
// step and rank the blocks with their masks, the work and the bytes, the critical path against the
// ideal; `--algo all` compares every algorithm the layout runs. Text, JSON, SVG or one HTML page.
#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>

#include "attention/schedule_compare.hpp"
#include "cli/command.hpp"
#include "cli/layout_flags.hpp"
#include "cli/mask_source.hpp"
#include "core/attention_mask.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reports/attention_matrix_svg.hpp"
#include "reports/layout_svg.hpp"
#include "reports/schedule_svg.hpp"
#include "reports/schedule_text.hpp"

namespace cplab::cli {
namespace {

struct ScheduleArgs {
  LayoutFlags flags;
  std::string algo = "all";
  std::int64_t heads = 32, kv_heads = 0, head_dim = 128;  // kv_heads 0: as many as heads
  const CLI::Option* kv_heads_flag = nullptr;
  std::string dtype = "bf16";
  std::string mask = "causal";
  std::string format = "text", svg_path, out;
  bool json = false, per_step = false;
};

// The shape every algorithm reads: nonsense here is bad input whatever `--algo` says.
sim::AttentionShape shape_of(const ScheduleArgs& args) {
  const DType dtype = parse_dtype(args.dtype);
  CPLAB_CHECK(dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16,
              "--dtype {}: attention inputs are f32, bf16 or f16", args.dtype);
  CPLAB_CHECK(args.heads >= 1, "--heads {}: expected at least 1 query head", args.heads);
  CPLAB_CHECK(args.head_dim >= 1, "--head-dim {}: expected at least 1", args.head_dim);
  const bool kv_given = args.kv_heads_flag != nullptr && args.kv_heads_flag->count() > 0;
  CPLAB_CHECK(!kv_given || args.kv_heads >= 1, "--kv-heads {}: expected at least 1 KV head",
              args.kv_heads);
  const std::int64_t kv_heads = kv_given ? args.kv_heads : args.heads;
  CPLAB_CHECK(args.heads % kv_heads == 0,
              "--kv-heads {}: the H={} query heads do not share H_kv={} KV heads evenly "
              "(H_kv must divide H)",
              kv_heads, args.heads, kv_heads);
  return {.heads = args.heads, .kv_heads = kv_heads, .head_dim = args.head_dim, .dtype = dtype};
}

int run_schedule(const ScheduleArgs& args) {
  const std::string format = args.json ? "json" : args.format;
  CPLAB_CHECK(format == "text" || format == "json" || format == "html",
              "--format '{}': expected text, json or html", args.format);
  CPLAB_CHECK(!args.json || args.format == "text", "--json and --format {} ask for two outputs",
              args.format);
  const sim::AttentionShape shape = shape_of(args);
  const sim::AttentionMask mask = read_mask(args.mask, args.flags.given());
  const std::vector<sim::AttentionAlgo> algos =
      args.algo == "all" ? sim::all_algos()
                         : std::vector<sim::AttentionAlgo>{sim::parse_algo(args.algo)};
  const LayoutSource source = read_layout_source(args.flags.spec, args.flags.given());
  const LayoutSpec& spec = source.spec;
  const RowPlan& row = source.rows[source.chosen];
  const bool compared = args.algo == "all";
  // One algorithm asked for by name and refused is bad input; `all` reports it and goes on.
  const std::vector<sim::ScheduleOutcome> outcomes = sim::schedule_outcomes(
      sim::layout_descriptor(spec.layout), spec, row, algos, shape, mask, compared);
  // Every refusal before any output, so that none is left behind by a later one.
  if (format == "json") reports::check_json_size(outcomes);
  std::string table = compared ? reports::comparison_table(spec, mask, outcomes) : "";
  std::vector<std::string> pictures;
  for (const sim::ScheduleOutcome& o : outcomes) {
    if (!o.refused.empty()) continue;
    table += (table.empty() ? "" : "\n") + reports::schedule_table(spec, o.schedule);
    if (!args.svg_path.empty() || format == "html") {
      const std::string title =
          fmt::format("{} · {} · {}", spec_brief(spec), sim::algo_name(o.algo), source.description);
      pictures.push_back(reports::schedule_svg(o.schedule, title));
      pictures.push_back(reports::attention_matrix_svg_or_note(o.schedule, title, args.per_step));
    }
  }
  const std::string svg = pictures.empty()       ? std::string()
                          : pictures.size() == 1 ? pictures.front()
                                                 : reports::stack_svgs(pictures);
  // The picture first: a path that cannot be written fails before anything reaches stdout.
  if (!args.svg_path.empty()) {
    CPLAB_CHECK(!pictures.empty(), "--svg: every algorithm asked for is refused");
    write_output_file(args.svg_path, svg);
  }
  std::function<void(std::ostream&)> fill;
  if (format == "json") {
    fill = [&](std::ostream& os) {
      reports::JsonSink out(os);
      reports::schedule_json(out, spec, row.padded_len, mask, outcomes, compared);
      out.finish();
    };
  } else {
    std::string text = format == "html"
                           ? reports::schedule_page(
                                 fmt::format("{} attention schedule", spec_brief(spec)), svg, table)
                           : table;
    if (format == "text" && !args.svg_path.empty())
      text += fmt::format("picture: {}\n", args.svg_path);
    fill = [text = std::move(text)](std::ostream& os) { os << text; };
  }
  if (args.out.empty()) {
    std::fflush(stdout);
    fill(std::cout);
    std::cout.flush();
  } else {
    write_output_file(args.out, fill);
    fmt::print("{}: {}\n", format, args.out);
  }
  return 0;
}

}  // namespace

Command add_schedule_command(CLI::App& app) {
  auto args = std::make_shared<ScheduleArgs>();
  CLI::App* sub = app.add_subcommand(
      "schedule", "Show CP attention step by step on one row: blocks, masks, work, bytes");
  sub->add_option("--layout", args->flags.spec.layout, "Layout (see cplab layout --help)")
      ->required();
  sub->add_option("--cp", args->flags.spec.cp, "CP size C (ranks in the group)")->required();
  sub->add_option("--algo", args->algo,
                  "Attention algorithm: all-gather, ring, ulysses, usp, or all (every one the "
                  "layout runs, compared)")
      ->capture_default_str();
  add_row_flags(sub, args->flags, "With --batch: the row to show (default 0)");
  add_layout_option_flags(sub, args->flags);
  sub->add_option("--heads", args->heads, "Query heads H")->capture_default_str();
  args->kv_heads_flag = sub->add_option("--kv-heads", args->kv_heads, "KV heads H_kv (default: H)");
  sub->add_option("--head-dim", args->head_dim, "Head dim d")->capture_default_str();
  sub->add_option("--dtype", args->dtype, "Q, K, V dtype: f32, bf16 or f16")->capture_default_str();
  sub->add_option(
         "--mask", args->mask,
         "Attention mask: causal (doc-causal), window:W, chunked:K or "
         "bidirectional:B-E[,B-E...] (spans of caller positions) or bidirectional:key=NAME (the "
         "runs a --batch key marks)")
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print one JSON object instead of the table");
  sub->add_option("--svg", args->svg_path, "Also draw the step × rank grid as SVG at this path");
  sub->add_option("--format", args->format, "text, json or html (the picture and the table)")
      ->capture_default_str();
  sub->add_flag("--per-step", args->per_step,
                "With --svg or --format html: one small attention matrix per step as well");
  sub->add_option("--out", args->out, "Write the output to this file instead of stdout");
  return {sub, [args] { return run_schedule(*args); }};
}

}  // namespace cplab::cli
