// `cplab schedule`: how CP attention runs step by step on one row under a layout (SPEC §13): per
// step and rank the blocks with their masks, the work and the bytes, the critical path against the
// ideal; `--algo all` compares every algorithm the layout runs. Text, JSON, SVG or one HTML page.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "attention/schedule.hpp"
#include "cli/command.hpp"
#include "cli/layout_flags.hpp"
#include "cli/mask_source.hpp"
#include "core/attention_mask.hpp"
#include "core/error.hpp"
#include "core/markup_text.hpp"
#include "core/output_file.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reports/attention_matrix_svg.hpp"
#include "reports/layout_svg.hpp"
#include "reports/schedule_svg.hpp"

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

// An algorithm the layout runs, with its schedule, or one it refuses, with why.
struct Outcome {
  sim::AttentionAlgo algo;
  std::string refused;
  sim::AttentionSchedule schedule;
};

// An algorithm's place among those compared, by critical path under the mask (1: the shortest;
// ties share it; refused ones take none).
std::int64_t critical_path_place(const std::vector<Outcome>& outcomes,
                                 const sim::AttentionSchedule& s) {
  std::int64_t shorter = 0;
  for (const Outcome& o : outcomes)
    shorter += o.refused.empty() && o.schedule.critical_path < s.critical_path;
  return shorter + 1;
}

double ratio_of(const sim::AttentionSchedule& s) {
  return s.ideal > 0 ? static_cast<double>(s.critical_path) / s.ideal : 1.0;
}

// The JSON is written as it is made: a row of a million tokens on stripe lists every slot of every
// buffer as its own range, far too many for an in-memory document (SPEC §13.2 bounds the walk).
class JsonOut {
 public:
  explicit JsonOut(std::ostream& os) : os_(os) {}
  ~JsonOut() { flush(); }
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;
  void raw(std::string_view text) {
    buf_ += text;
    if (buf_.size() > (std::size_t{1} << 20)) flush();
  }
  template <typename... T>
  void put(fmt::format_string<T...> f, T&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<T>(args)...);
    if (buf_.size() > (std::size_t{1} << 20)) flush();
  }
  // An object's members without its closing brace, so that more members can follow.
  void open_object(const nlohmann::ordered_json& head) {
    std::string text = head.dump();
    text.pop_back();
    raw(text);
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& os_;
  std::string buf_;
};

// Positions [begin, end) of a buffer whose slots are `slots`, as global [begin, end) ranges in
// buffer order, adjacent slots merged.
void global_ranges(JsonOut& out, const std::vector<std::int64_t>& slots,
                   const sim::LocalRange& range) {
  out.raw("[");
  std::int64_t begin = -1, end = -1;
  bool first = true;
  auto emit = [&] {
    out.put("{}[{},{}]", first ? "" : ",", begin, end);
    first = false;
  };
  for (std::int64_t p = range.begin; p < range.end; ++p) {
    const std::int64_t g = slots[static_cast<std::size_t>(p)];
    if (g == end) {
      ++end;
      continue;
    }
    if (begin >= 0) emit();
    begin = g;
    end = g + 1;
  }
  if (begin >= 0) emit();
  out.raw("]");
}

// The slot ranges the JSON would list: a block's q and k each list one per run of adjacent slots.
std::int64_t range_count(const std::vector<std::int64_t>& slots, const sim::LocalRange& range) {
  std::int64_t count = 0;
  for (std::int64_t p = range.begin; p < range.end; ++p) {
    const auto at = static_cast<std::size_t>(p);
    if (p == range.begin || slots[at] != slots[at - 1] + 1) ++count;
  }
  return count;
}

// The JSON lists every slot range of every block (stripe's buffers are all single slots): bounded
// so that a long row cannot fill a disk; the table and the picture have no such size.
constexpr std::int64_t kMaxJsonRanges = std::int64_t{1} << 24;

// Adds the ranges `s` lists to `ranges`, refusing past the bound.
void count_json_ranges(const sim::AttentionSchedule& s, std::int64_t& ranges) {
  for (const sim::ScheduleStep& step : s.steps) {
    for (const sim::RankStep& rank : step.ranks) {
      const std::vector<std::int64_t> q_slots = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> k_slots = s.buffer_slots(rank.keys);
      for (const sim::ScheduleBlock& b : rank.blocks)
        ranges += range_count(q_slots, b.q) + range_count(k_slots, b.k);
      CPLAB_CHECK(ranges <= kMaxJsonRanges,
                  "--json: the output would list more than {} slot ranges (cplab's bound on the "
                  "JSON, passed at {}); use the table, --svg, one --algo or a shorter row",
                  kMaxJsonRanges, sim::algo_name(s.algo));
    }
  }
}

// `place`: its critical_path_place when algorithms are compared (0: one algorithm, no "rank").
void schedule_json(JsonOut& out, const sim::AttentionSchedule& s, std::int64_t place = 0) {
  nlohmann::ordered_json head;
  head["layout"] = s.layout;
  head["algo"] = sim::algo_name(s.algo);
  head["cp"] = s.cp;
  head["padded_seq_len"] = s.padded_len;
  head["ring_degree"] = s.ring_degree;
  head["ulysses_degree"] = s.ulysses_degree;
  head["heads"] = s.shape.heads;
  head["kv_heads"] = s.shape.kv_heads;
  head["head_dim"] = s.shape.head_dim;
  head["dtype"] = std::string(dtype_name(s.shape.dtype));
  head["mask"] = sim::mask_text(s.mask);
  head["total_work"] = s.total_work;
  head["critical_path"] = s.critical_path;
  head["ideal"] = s.ideal;
  head["ratio"] = ratio_of(s);
  if (place > 0) head["rank"] = place;
  out.open_object(head);
  out.raw(",\"steps\":[");
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    const sim::ScheduleStep& step = s.steps[t];
    out.put("{}{{\"step\":{},\"exchange\":{},\"ranks\":[", t == 0 ? "" : ",", t,
            nlohmann::json(sim::exchange_name(step.exchange)).dump());
    for (std::size_t r = 0; r < step.ranks.size(); ++r) {
      const sim::RankStep& rank = step.ranks[r];
      const std::vector<std::int64_t> q_slots = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> k_slots = s.buffer_slots(rank.keys);
      out.put("{}{{\"rank\":{},\"kv_from\":{},\"heads\":{},\"blocks\":[", r == 0 ? "" : ",",
              rank.rank, rank.kv_from, rank.heads);
      for (std::size_t i = 0; i < rank.blocks.size(); ++i) {
        const sim::ScheduleBlock& b = rank.blocks[i];
        out.raw(i == 0 ? "{\"q\":" : ",{\"q\":");
        global_ranges(out, q_slots, b.q);
        out.raw(",\"k\":");
        global_ranges(out, k_slots, b.k);
        out.put(",\"mask\":\"{}\"", sim::mask_name(b.mask));
        if (b.mask == sim::MaskKind::causal) out.put(",\"diagonal\":{}", b.diagonal);
        out.put(",\"pairs\":{}}}", b.pairs);
      }
      out.put(
          "],\"skipped_blocks\":{},\"work\":{},\"bytes_sent\":{},\"bytes_received\":{},"
          "\"backward_bytes_sent\":{},\"backward_bytes_received\":{}}}",
          rank.skipped_blocks, rank.work, rank.bytes_sent, rank.bytes_received,
          rank.backward_bytes_sent, rank.backward_bytes_received);
    }
    out.raw("]}");
  }
  out.raw("]}");
}

std::string blocks_cell(const sim::RankStep& rank) {
  std::int64_t counts[3] = {0, 0, 0};
  for (const sim::ScheduleBlock& b : rank.blocks) ++counts[static_cast<int>(b.mask)];
  return fmt::format("{}/{}/{} +{} skipped", counts[0], counts[1], counts[2], rank.skipped_blocks);
}

std::string headline(const LayoutSpec& spec, const sim::AttentionSchedule& s) {
  return fmt::format("{} · {}: L={}, ℓ={}, H={} (H_kv={}, d={}, {}), mask {}, {} step{}",
                     spec_brief(spec), sim::algo_name(s.algo), s.padded_len, s.local_len(),
                     s.shape.heads, s.shape.kv_heads, s.shape.head_dim, dtype_name(s.shape.dtype),
                     sim::mask_text(s.mask), s.steps.size(), s.steps.size() == 1 ? "" : "s");
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
      out += fmt::format("{:>4}  {:<10} {:>4} {:>7} {:>5}  {:<28} {:>14} {:>12} {:>12}\n", t,
                         sim::exchange_name(s.steps[t].exchange), rank.rank,
                         rank.kv_from < 0 ? std::string("-") : std::to_string(rank.kv_from),
                         rank.heads, blocks_cell(rank), rank.work, rank.bytes_received,
                         rank.backward_bytes_received);
    }
  }
  return out;
}

std::string comparison_table(const LayoutSpec& spec, const sim::AttentionMask& mask,
                             const std::vector<Outcome>& outcomes) {
  std::string out = fmt::format("{}: attention algorithms compared, mask {}\n", spec_brief(spec),
                                sim::mask_text(mask));
  out += fmt::format("{:<11} {:>5} {:>16} {:>16} {:>8} {:>14} {:>14} {:>5}\n", "algo", "steps",
                     "critical path", "ideal", "ratio", "fwd bytes/rank", "bwd bytes/rank", "rank");
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
    out += fmt::format("{:<11} {:>5} {:>16} {:>16.1f} {:>8.4f} {:>14} {:>14} {:>5}\n",
                       sim::algo_name(o.algo), s.steps.size(), s.critical_path, s.ideal,
                       ratio_of(s), forward, backward, critical_path_place(outcomes, s));
  }
  return out;
}

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

// The attention matrix beside the work grid; a row whose pairs are past the matrix's bound gets a
// line that says so instead (the grid is drawn for any row).
std::string matrix_picture(const sim::AttentionSchedule& s, const std::string& title,
                           bool per_step) {
  try {
    return reports::attention_matrix_svg(s, title, per_step);
  } catch (const Error& e) {
    return fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="900" height="30" font-family="sans-serif")"
        R"( font-size="12"><text x="16" y="20">attention matrix not drawn: {}</text></svg>)",
        escape_markup(e.what()));
  }
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
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(spec.layout);
  std::vector<Outcome> outcomes;
  for (sim::AttentionAlgo algo : algos) {
    Outcome o{
        .algo = algo, .refused = sim::schedule_refusal(layout, spec, algo, shape), .schedule = {}};
    // One algorithm asked for by name and refused is bad input; `all` reports it and goes on.
    CPLAB_CHECK(o.refused.empty() || args.algo == "all", "{}", o.refused);
    if (o.refused.empty()) {
      try {
        o.schedule = sim::build_schedule(layout, spec, row, algo, shape, mask);
      } catch (const sim::ScheduleTooLarge& e) {
        if (args.algo != "all") throw;
        o.refused = e.what();
      }
    }
    outcomes.push_back(std::move(o));
  }
  // Every refusal before any output, so that none is left behind by a later one.
  if (format == "json") {
    std::int64_t ranges = 0;
    for (const Outcome& o : outcomes) {
      if (o.refused.empty()) count_json_ranges(o.schedule, ranges);
    }
  }
  std::string table = args.algo == "all" ? comparison_table(spec, mask, outcomes) : "";
  std::vector<std::string> pictures;
  for (const Outcome& o : outcomes) {
    if (!o.refused.empty()) continue;
    table += (table.empty() ? "" : "\n") + schedule_table(spec, o.schedule);
    if (!args.svg_path.empty() || format == "html") {
      const std::string title =
          fmt::format("{} · {} · {}", spec_brief(spec), sim::algo_name(o.algo), source.description);
      pictures.push_back(reports::schedule_svg(o.schedule, title));
      pictures.push_back(matrix_picture(o.schedule, title, args.per_step));
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
      JsonOut out(os);
      if (args.algo != "all") {
        schedule_json(out, outcomes.front().schedule);
      } else {
        nlohmann::ordered_json head;
        head["layout"] = spec.layout;
        head["cp"] = spec.cp;
        head["padded_seq_len"] = row.padded_len;
        head["mask"] = sim::mask_text(mask);
        out.open_object(head);
        out.raw(",\"algos\":[");
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
          const Outcome& o = outcomes[i];
          if (i > 0) out.raw(",");
          if (o.refused.empty()) {
            schedule_json(out, o.schedule, critical_path_place(outcomes, o.schedule));
          } else {
            out.raw(nlohmann::ordered_json{{"algo", sim::algo_name(o.algo)}, {"refused", o.refused}}
                        .dump());
          }
        }
        out.raw("]}");
      }
      out.raw("\n");
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
