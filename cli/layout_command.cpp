// `cplab layout`: which rank gets which token of one row, as the reference plans it. For a user
// looking at a loss curve that went wrong, or at a layout they have not met before.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/layout_compare.hpp"
#include "cli/layout_flags.hpp"
#include "cli/layout_source.hpp"
#include "cli/mask_source.hpp"
#include "core/error.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "reports/json_text.hpp"
#include "reports/layout_svg.hpp"

namespace cplab::cli {
namespace {

struct LayoutOptions {
  LayoutFlags flags;
  std::string svg_path;
  std::string mask = "causal";
  bool json = false;
};

std::vector<std::int64_t> local(const RowPlan& row, const std::vector<std::int64_t>& global,
                                std::size_t rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t g : row.index[rank]) out.push_back(global[g]);
  return out;
}

std::vector<std::int64_t> local_doc_ids(const RowPlan& row, std::size_t rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t g : row.index[rank]) out.push_back(row.doc_ids[g]);
  return out;
}

// The layout's own facts of a rank (or of the whole layout), appended after the contract's fields.
void add_facts(reports::JsonObjectText& out, const std::vector<sim::NamedValue>& facts) {
  for (const sim::NamedValue& fact : facts) out.set(fact.name, fact.value);
}

// The facts of the whole layout (usp: its two degrees); none without a rank structure.
std::vector<sim::NamedValue> layout_facts(const sim::LayoutDescriptor& d, const LayoutSpec& spec) {
  return d.rank_structure != nullptr && d.rank_structure->layout_facts != nullptr
             ? d.rank_structure->layout_facts(spec)
             : std::vector<sim::NamedValue>{};
}

std::vector<sim::NamedValue> rank_facts(const LayoutSpec& spec, std::int64_t rank) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(spec.layout);
  return d.rank_structure != nullptr && d.rank_structure->rank_facts != nullptr
             ? d.rank_structure->rank_facts(spec, rank)
             : std::vector<sim::NamedValue>{};
}

std::string facts_text(const std::vector<sim::NamedValue>& facts) {
  std::string text;
  for (const sim::NamedValue& fact : facts)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", fact.name, fact.value);
  return text;
}

// A rank's object of the contract; its per-token lists are written straight into the sink.
void write_rank(reports::JsonSink& sink, const LayoutSpec& spec, const RowPlan& row,
                const std::vector<std::int64_t>& work, std::size_t r) {
  reports::JsonObjectText rank;
  rank.set("rank", r);
  rank.set_writer("indices", [&](reports::JsonSink& out) { out.ints(row.index[r]); });
  rank.set_writer("positions",
                  [&](reports::JsonSink& out) { out.ints_through(row.index[r], row.positions); });
  if (row.packed)
    rank.set_writer("doc_ids",
                    [&](reports::JsonSink& out) { out.ints_through(row.index[r], row.doc_ids); });
  if (!row.local_cu_seqlens.empty())
    rank.set_writer("cu_seqlens",
                    [&](reports::JsonSink& out) { out.ints(row.local_cu_seqlens[r]); });
  rank.set("valid_tokens", row.valid_tokens[r]);
  rank.set("causal_work", work[r]);
  add_facts(rank, rank_facts(spec, static_cast<std::int64_t>(r)));
  if (!row.varlen.empty()) {  // layouts whose ranks attend through varlen segments
    const VarlenSegments& v = row.varlen[r];
    rank.set_writer("cu_seqlens_q", [&](reports::JsonSink& out) { out.ints(v.cu_seqlens_q); });
    rank.set_writer("cu_seqlens_k", [&](reports::JsonSink& out) { out.ints(v.cu_seqlens_k); });
    rank.set("k_slice", std::vector<std::int64_t>{v.k_begin, v.k_end});
  }
  rank.write(sink);
}

// Sets the single-row fields on out, in the order of the `cplab layout --json` contract. row and
// work are read when out is written.
void add_row_fields(reports::JsonObjectText& out, const LayoutSpec& spec, const RowPlan& row,
                    const std::vector<std::int64_t>& work) {
  out.set("padded_seq_len", row.padded_len);
  out.set_text("original_seq_len", row.packed ? "null" : std::to_string(row.original_len));
  out.set("imbalance", reference::imbalance(work));
  out.set_writer("ranks", [&spec, &row, &work](reports::JsonSink& sink) {
    sink.put('[');
    for (std::size_t r = 0; r < row.index.size(); ++r) {
      if (r != 0) sink.put(',');
      write_rank(sink, spec, row, work, r);
    }
    sink.put(']');
  });
}

// The chosen row as the single-row contract; with --batch, "row" (the chosen one) and "rows" (every
// row of the batch, each with its single-row fields and its "row" number) are added after it.
void print_json(const LayoutSpec& spec, const LayoutSource& source,
                const std::vector<std::vector<std::int64_t>>& works,
                const sim::AttentionMask& mask) {
  reports::JsonObjectText out;
  out.set("layout", spec.layout);
  out.set("cp", spec.cp);
  // Absent under the causal mask: the contract's keys stay as they were.
  if (!mask.is_causal()) out.set("mask", sim::mask_text(mask));
  const sim::LayoutDescriptor& descriptor = sim::layout_descriptor(spec.layout);
  add_facts(out, layout_facts(descriptor, spec));
  add_row_fields(out, spec, source.rows[source.chosen], works[source.chosen]);
  if (source.from_batch) {
    out.set("row", source.chosen);
    out.set_writer("rows", [&](reports::JsonSink& sink) {
      sink.put('[');
      for (std::size_t b = 0; b < source.rows.size(); ++b) {
        reports::JsonObjectText row;
        row.set("row", b);
        add_row_fields(row, spec, source.rows[b], works[b]);
        if (b != 0) sink.put(',');
        row.write(sink);
      }
      sink.put(']');
    });
  }
  std::fflush(stdout);
  reports::JsonSink sink(stdout);
  out.write(sink);
  sink.put('\n');
  sink.finish();
}

void print_table(const LayoutSpec& spec, const RowPlan& row, const std::vector<std::int64_t>& work,
                 const sim::AttentionMask& mask) {
  const std::string original =
      row.packed ? "packed row" : fmt::format("original length {}", row.original_len);
  fmt::print(
      "{}: padded length {} ({}), {} tokens per rank, imbalance {:.3f} (max/mean work under the "
      "{} mask)\n",
      spec_brief(spec), row.padded_len, original, row.local_len(), reference::imbalance(work),
      sim::mask_text(mask));
  if (row.packed) fmt::print("cu_seqlens_padded {}\n", row.cu_seqlens_padded);
  const sim::LayoutDescriptor& descriptor = sim::layout_descriptor(spec.layout);
  if (const auto facts = layout_facts(descriptor, spec); !facts.empty())
    fmt::print("{}\n", facts_text(facts));
  fmt::print("{:>4}  {:>6}  {:>8}\n", "rank", "valid", "work");
  // A map that is an assignment (its units balanced by cost): what each rank was given.
  std::vector<std::vector<std::int64_t>> assigned;
  if (sim::layout_descriptor(spec.layout).map.source == sim::MapSource::assignment && row.cp > 1 &&
      row.map.table.size() % static_cast<std::size_t>(row.cp) == 0) {
    const std::size_t per = row.map.table.size() / static_cast<std::size_t>(row.cp);
    for (std::size_t r = 0; r < static_cast<std::size_t>(row.cp); ++r)
      assigned.emplace_back(row.map.table.begin() + r * per, row.map.table.begin() + (r + 1) * per);
  }
  const std::string indent(24, ' ');  // under the indices column
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    fmt::print("{:>4}  {:>6}  {:>8}  indices    {}\n", r, row.valid_tokens[r], work[r],
               row.index[r]);
    fmt::print("{}positions  {}\n", indent, local(row, row.positions, r));
    if (row.packed) fmt::print("{}doc ids    {}\n", indent, local_doc_ids(row, r));
    if (!row.local_cu_seqlens.empty())
      fmt::print("{}cu_seqlens {}\n", indent, row.local_cu_seqlens[r]);
    if (!assigned.empty()) fmt::print("{}assigned   {}\n", indent, assigned[r]);
    const std::vector<sim::NamedValue> facts = rank_facts(spec, static_cast<std::int64_t>(r));
    if (!facts.empty()) fmt::print("{}{}\n", indent, facts_text(facts));
    if (!row.varlen.empty()) {
      fmt::print("{}cu_seqlens_q {}  cu_seqlens_k {}  k_slice [{}, {})\n", indent,
                 row.varlen[r].cu_seqlens_q, row.varlen[r].cu_seqlens_k, row.varlen[r].k_begin,
                 row.varlen[r].k_end);
    }
  }
}

int run_layout(const LayoutOptions& options) {
  const LayoutSourceArgs args = options.flags.given();
  const LayoutSpec& asked = options.flags.spec;
  const sim::AttentionMask mask = read_mask(options.mask, args);
  if (asks_every_layout(asked.layout)) {
    // The table and the JSON need each layout's numbers only; the picture, every slot.
    const reports::StoryDetail detail =
        options.svg_path.empty() ? reports::StoryDetail::summary : reports::StoryDetail::picture;
    return print_layout_comparison(tell_layouts(asked, asked.layout, args, detail, mask),
                                   options.json, options.svg_path);
  }
  const LayoutSource source = read_layout_source(asked, args);
  const LayoutSpec& spec = source.spec;  // with the magi options applied
  std::vector<std::vector<std::int64_t>> works;
  for (const RowPlan& row : source.rows) works.push_back(reference::causal_work(row, mask));
  const RowPlan& row = source.rows[source.chosen];
  const std::vector<std::int64_t>& work = works[source.chosen];
  // The picture first: a path that cannot be written fails before anything reaches stdout.
  if (!options.svg_path.empty()) {
    reports::write_layout_svg(
        options.svg_path, row, work,
        fmt::format(
            "{} · {}{}", spec_brief(spec), source.description,
            mask.is_causal() ? std::string() : " · work under the mask " + sim::mask_text(mask)));
  }
  if (options.json) {
    print_json(spec, source, works, mask);
    return 0;
  }
  if (source.from_batch) fmt::print("{}\n", source.description);
  print_table(spec, row, work, mask);
  if (source.rows.size() > 1) {
    // Every row in one line, to spot the row whose layout is off.
    for (std::size_t b = 0; b < source.rows.size(); ++b) {
      fmt::print("row {:>3}: padded length {}, imbalance {:.3f}{}\n", b, source.rows[b].padded_len,
                 reference::imbalance(works[b]), b == source.chosen ? "  (shown above)" : "");
    }
  }
  if (!options.svg_path.empty()) fmt::print("picture: {}\n", options.svg_path);
  return 0;
}

}  // namespace

Command add_layout_command(CLI::App& app) {
  auto options = std::make_shared<LayoutOptions>();
  CLI::App* sub = app.add_subcommand(
      "layout", "Show which rank holds which token of one row under a CP layout");
  sub->add_option("--layout", options->flags.spec.layout,
                  fmt::format("Layout: {}, or all (every layout side by side)",
                              fmt::join(reference::layout_names(), ", ")))
      ->required();
  sub->add_option("--cp", options->flags.spec.cp, "CP size C (ranks in the group)")->required();
  add_row_flags(sub, options->flags, "With --batch: the row to show (default 0; JSON lists all)");
  sub->add_option("--svg", options->svg_path,
                  "Also draw the shown row as a self-contained SVG picture at this path");
  add_layout_option_flags(sub, options->flags);
  sub->add_option(
         "--mask", options->mask,
         "Count each rank's work under this attention mask: causal (doc-causal), "
         "window:W, chunked:K, bidirectional:B-E[,B-E...] or bidirectional:key=NAME (spans from "
         "a --batch key)")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print one JSON object instead of the table");
  return {sub, [options] { return run_layout(*options); }};
}

}  // namespace cplab::cli
