// `cplab schedule`: how CP attention runs step by step on one row under a layout (SPEC §13): per
// step and rank the blocks with their masks, the work and the bytes, the critical path against the
// ideal; `--algo all` compares every algorithm the layout runs. Text, JSON, SVG or one HTML page.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/layout_flags.hpp"
#include "reference/types/error.hpp"
#include "reports/layout_svg.hpp"
#include "reports/schedule_svg.hpp"
#include "sim/attention/schedule.hpp"
#include "sim/layout_descriptor.hpp"

namespace cplab::cli {
namespace {

struct ScheduleArgs {
  LayoutFlags flags;
  std::string algo = "all";
  std::int64_t heads = 32, kv_heads = 0, head_dim = 128;
  std::string dtype = "bf16";
  std::string format = "text", svg_path, out;
  bool json = false;
};

// An algorithm the layout runs, with its schedule, or one it refuses, with why.
struct Outcome {
  sim::AttentionAlgo algo;
  std::string refused;
  sim::AttentionSchedule schedule;
};

double ratio_of(const sim::AttentionSchedule& s) {
  return s.ideal > 0 ? static_cast<double>(s.critical_path) / s.ideal : 1.0;
}

// Positions [begin, end) of a buffer whose slots are `slots`, as global [begin, end) ranges in
// buffer order, adjacent slots merged.
nlohmann::ordered_json global_ranges(const std::vector<std::int64_t>& slots,
                                     const sim::LocalRange& range) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::int64_t begin = -1, end = -1;
  for (std::int64_t p = range.begin; p < range.end; ++p) {
    const std::int64_t g = slots[static_cast<std::size_t>(p)];
    if (g == end) {
      ++end;
      continue;
    }
    if (begin >= 0) out.push_back({begin, end});
    begin = g;
    end = g + 1;
  }
  if (begin >= 0) out.push_back({begin, end});
  return out;
}

nlohmann::ordered_json schedule_json(const sim::AttentionSchedule& s) {
  nlohmann::ordered_json out;
  out["layout"] = s.layout;
  out["algo"] = sim::algo_name(s.algo);
  out["cp"] = s.cp;
  out["padded_seq_len"] = s.padded_len;
  out["ring_degree"] = s.ring_degree;
  out["ulysses_degree"] = s.ulysses_degree;
  out["heads"] = s.shape.heads;
  out["kv_heads"] = s.shape.kv_heads;
  out["head_dim"] = s.shape.head_dim;
  out["dtype"] = std::string(dtype_name(s.shape.dtype));
  out["total_work"] = s.total_work;
  out["critical_path"] = s.critical_path;
  out["ideal"] = s.ideal;
  out["ratio"] = ratio_of(s);
  out["steps"] = nlohmann::ordered_json::array();
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    const sim::ScheduleStep& step = s.steps[t];
    nlohmann::ordered_json js{{"step", t}, {"exchange", step.exchange}};
    js["ranks"] = nlohmann::ordered_json::array();
    for (const sim::RankStep& rank : step.ranks) {
      const std::vector<std::int64_t> q_slots = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> k_slots = s.buffer_slots(rank.keys);
      nlohmann::ordered_json jr{
          {"rank", rank.rank}, {"kv_from", rank.kv_from}, {"heads", rank.heads}};
      jr["blocks"] = nlohmann::ordered_json::array();
      for (const sim::ScheduleBlock& b : rank.blocks) {
        nlohmann::ordered_json jb{{"q", global_ranges(q_slots, b.q)},
                                  {"k", global_ranges(k_slots, b.k)},
                                  {"mask", sim::mask_name(b.mask)}};
        if (b.mask == sim::MaskKind::causal) jb["diagonal"] = b.diagonal;
        jb["pairs"] = b.pairs;
        jr["blocks"].push_back(std::move(jb));
      }
      jr["skipped_blocks"] = rank.skipped_blocks;
      jr["work"] = rank.work;
      jr["bytes_sent"] = rank.bytes_sent;
      jr["bytes_received"] = rank.bytes_received;
      jr["backward_bytes_sent"] = rank.backward_bytes_sent;
      jr["backward_bytes_received"] = rank.backward_bytes_received;
      js["ranks"].push_back(std::move(jr));
    }
    out["steps"].push_back(std::move(js));
  }
  return out;
}

std::string blocks_cell(const sim::RankStep& rank) {
  std::int64_t counts[3] = {0, 0, 0};
  for (const sim::ScheduleBlock& b : rank.blocks) ++counts[static_cast<int>(b.mask)];
  return fmt::format("{}/{}/{} +{} skipped", counts[0], counts[1], counts[2], rank.skipped_blocks);
}

std::string headline(const LayoutSpec& spec, const sim::AttentionSchedule& s) {
  return fmt::format("{} · {}: L={}, ℓ={}, H={} (H_kv={}, d={}, {}), {} step{}", spec_brief(spec),
                     sim::algo_name(s.algo), s.padded_len, s.local_len(), s.shape.heads,
                     s.shape.kv_heads, s.shape.head_dim, dtype_name(s.shape.dtype), s.steps.size(),
                     s.steps.size() == 1 ? "" : "s");
}

std::string schedule_table(const LayoutSpec& spec, const sim::AttentionSchedule& s) {
  std::string out = headline(spec, s) + "\n";
  out += fmt::format(
      "critical path {} (Σ over steps of the busiest rank's work), ideal {:.1f} (total/C), ratio "
      "{:.4f}\n",
      s.critical_path, s.ideal, ratio_of(s));
  out += fmt::format("{:>4}  {:<10} {:>4} {:>7} {:>5}  {:<28} {:>14} {:>12} {:>12}\n", "step",
                     "exchange", "rank", "kv_from", "heads", "blocks full/causal/doc-causal",
                     "work", "fwd bytes", "bwd bytes");
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    for (const sim::RankStep& rank : s.steps[t].ranks) {
      out += fmt::format(
          "{:>4}  {:<10} {:>4} {:>7} {:>5}  {:<28} {:>14} {:>12} {:>12}\n", t, s.steps[t].exchange,
          rank.rank, rank.kv_from < 0 ? std::string("-") : std::to_string(rank.kv_from), rank.heads,
          blocks_cell(rank), rank.work, rank.bytes_received, rank.backward_bytes_received);
    }
  }
  return out;
}

std::string comparison_table(const LayoutSpec& spec, const std::vector<Outcome>& outcomes) {
  std::string out = fmt::format("{}: attention algorithms compared\n", spec_brief(spec));
  out += fmt::format("{:<11} {:>5} {:>16} {:>16} {:>8} {:>14} {:>14}\n", "algo", "steps",
                     "critical path", "ideal", "ratio", "fwd bytes/rank", "bwd bytes/rank");
  for (const Outcome& o : outcomes) {
    if (!o.refused.empty()) {
      out += fmt::format("{:<11} refused: {}\n", sim::algo_name(o.algo), o.refused);
      continue;
    }
    const sim::AttentionSchedule& s = o.schedule;
    std::int64_t forward = 0, backward = 0;  // the busiest rank's sum over the steps
    for (std::int64_t r = 0; r < s.cp; ++r) {
      std::int64_t f = 0, b = 0;
      for (const sim::ScheduleStep& step : s.steps) {
        f += step.ranks[static_cast<std::size_t>(r)].bytes_received;
        b += step.ranks[static_cast<std::size_t>(r)].backward_bytes_received;
      }
      forward = std::max(forward, f);
      backward = std::max(backward, b);
    }
    out += fmt::format("{:<11} {:>5} {:>16} {:>16.1f} {:>8.4f} {:>14} {:>14}\n",
                       sim::algo_name(o.algo), s.steps.size(), s.critical_path, s.ideal,
                       ratio_of(s), forward, backward);
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write '{}'", path);
  out << text;
  out.close();
  CPLAB_CHECK(out.good(), "short write to '{}'", path);
}

sim::AttentionShape shape_of(const ScheduleArgs& args) {
  const DType dtype = parse_dtype(args.dtype);
  CPLAB_CHECK(dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16,
              "--dtype {}: attention inputs are f32, bf16 or f16", args.dtype);
  return {.heads = args.heads,
          .kv_heads = args.kv_heads > 0 ? args.kv_heads : args.heads,
          .head_dim = args.head_dim,
          .dtype = dtype};
}

int run_schedule(const ScheduleArgs& args) {
  const std::string format = args.json ? "json" : args.format;
  CPLAB_CHECK(format == "text" || format == "json" || format == "html",
              "--format '{}': expected text, json or html", args.format);
  CPLAB_CHECK(!args.json || args.format == "text", "--json and --format {} ask for two outputs",
              args.format);
  CPLAB_CHECK(args.kv_heads >= 0, "--kv-heads {}: expected a positive count", args.kv_heads);
  const sim::AttentionShape shape = shape_of(args);
  const std::vector<sim::AttentionAlgo> algos =
      args.algo == "all" ? sim::all_algos()
                         : std::vector<sim::AttentionAlgo>{sim::parse_algo(args.algo)};
  const LayoutSource source = read_layout_source(args.flags.spec, args.flags.given());
  const LayoutSpec& spec = source.spec;
  const RowPlan& row = source.rows[source.chosen];
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(spec.layout);
  std::vector<Outcome> outcomes;
  for (sim::AttentionAlgo algo : algos) {
    Outcome o{
        .algo = algo, .refused = sim::schedule_refusal(layout, spec, algo, shape), .schedule = {}};
    // One algorithm asked for by name and refused is bad input; `all` reports it and goes on.
    CPLAB_CHECK(o.refused.empty() || args.algo == "all", "{}", o.refused);
    if (o.refused.empty()) o.schedule = sim::build_schedule(layout, spec, row, algo, shape);
    outcomes.push_back(std::move(o));
  }
  std::string table = args.algo == "all" ? comparison_table(spec, outcomes) : "";
  std::vector<std::string> pictures;
  for (const Outcome& o : outcomes) {
    if (!o.refused.empty()) continue;
    table += (table.empty() ? "" : "\n") + schedule_table(spec, o.schedule);
    if (!args.svg_path.empty() || format == "html") {
      pictures.push_back(reports::schedule_svg(
          o.schedule, fmt::format("{} · {} · {}", spec_brief(spec), sim::algo_name(o.algo),
                                  source.description)));
    }
  }
  const std::string svg = pictures.empty()       ? std::string()
                          : pictures.size() == 1 ? pictures.front()
                                                 : reports::stack_svgs(pictures);
  // The picture first: a path that cannot be written fails before anything reaches stdout.
  if (!args.svg_path.empty()) {
    CPLAB_CHECK(!pictures.empty(), "--svg: every algorithm asked for is refused");
    write_file(args.svg_path, svg);
  }
  std::string text;
  if (format == "json") {
    nlohmann::ordered_json out;
    if (args.algo != "all") {
      out = schedule_json(outcomes.front().schedule);
    } else {
      out["layout"] = spec.layout;
      out["cp"] = spec.cp;
      out["padded_seq_len"] = row.padded_len;
      out["algos"] = nlohmann::ordered_json::array();
      for (const Outcome& o : outcomes) {
        out["algos"].push_back(
            o.refused.empty()
                ? schedule_json(o.schedule)
                : nlohmann::ordered_json{{"algo", sim::algo_name(o.algo)}, {"refused", o.refused}});
      }
    }
    text = out.dump() + "\n";
  } else if (format == "html") {
    text =
        reports::schedule_page(fmt::format("{} attention schedule", spec_brief(spec)), svg, table);
  } else {
    text = table;
    if (!args.svg_path.empty()) text += fmt::format("picture: {}\n", args.svg_path);
  }
  if (args.out.empty()) {
    fmt::print("{}", text);
  } else {
    write_file(args.out, text);
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
  sub->add_option("--kv-heads", args->kv_heads, "KV heads H_kv (default: H)");
  sub->add_option("--head-dim", args->head_dim, "Head dim d")->capture_default_str();
  sub->add_option("--dtype", args->dtype, "Q, K, V dtype: f32, bf16 or f16")->capture_default_str();
  sub->add_flag("--json", args->json, "Print one JSON object instead of the table");
  sub->add_option("--svg", args->svg_path, "Also draw the step × rank grid as SVG at this path");
  sub->add_option("--format", args->format, "text, json or html (the picture and the table)")
      ->capture_default_str();
  sub->add_option("--out", args->out, "Write the output to this file instead of stdout");
  return {sub, [args] { return run_schedule(*args); }};
}

}  // namespace cplab::cli
