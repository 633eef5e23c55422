// `cplab layout`: which rank gets which token of one row, as the reference plans it. For a user
// looking at a loss curve that went wrong, or at a layout they have not met before.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "reference/plan.hpp"
#include "reference/types/error.hpp"
#include "reference/work.hpp"

namespace cplab::cli {
namespace {

struct LayoutOptions {
  LayoutSpec spec;
  std::int64_t seq_len = 0;
  std::string doc_lens;
  bool json = false;
  CLI::Option* seq_len_option = nullptr;
  CLI::Option* doc_lens_option = nullptr;
};

// "5,3,8" → {5, 3, 8}; anything that is not a list of non-negative integers is an error.
std::vector<std::int64_t> parse_doc_lens(const std::string& text) {
  std::vector<std::int64_t> lens;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    CPLAB_CHECK(!item.empty() && ec == std::errc() && end == item.data() + item.size(),
                "--doc-lens '{}': '{}' is not an integer (expected a list like 5,3,8)", text, item);
    CPLAB_CHECK(value >= 0, "--doc-lens '{}': document {} has negative length {}", text,
                lens.size(), value);
    lens.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return lens;
}

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

void print_json(const LayoutSpec& spec, const RowPlan& row, const std::vector<std::int64_t>& work) {
  nlohmann::ordered_json out;
  out["layout"] = spec.layout;
  out["cp"] = spec.cp;
  out["padded_seq_len"] = row.padded_len;
  out["original_seq_len"] =
      row.packed ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.original_len);
  out["imbalance"] = reference::imbalance(work);
  out["ranks"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    nlohmann::ordered_json rank;
    rank["rank"] = r;
    rank["indices"] = row.index[r];
    rank["positions"] = local(row, row.positions, r);
    if (row.packed) rank["doc_ids"] = local_doc_ids(row, r);
    if (spec.layout == "thd") rank["cu_seqlens"] = row.local_cu_seqlens[r];
    rank["valid_tokens"] = row.valid_tokens[r];
    rank["causal_work"] = work[r];
    out["ranks"].push_back(std::move(rank));
  }
  fmt::print("{}\n", out.dump());
}

void print_table(const LayoutSpec& spec, const RowPlan& row,
                 const std::vector<std::int64_t>& work) {
  const std::string original =
      row.packed ? "packed row" : fmt::format("original length {}", row.original_len);
  fmt::print(
      "{}: padded length {} ({}), {} tokens per rank, imbalance {:.3f} (max/mean causal work)\n",
      spec_brief(spec), row.padded_len, original, row.local_len(), reference::imbalance(work));
  if (row.packed) fmt::print("cu_seqlens_padded {}\n", row.cu_seqlens_padded);
  fmt::print("{:>4}  {:>6}  {:>8}\n", "rank", "valid", "work");
  const std::string indent(24, ' ');  // under the indices column
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    fmt::print("{:>4}  {:>6}  {:>8}  indices    {}\n", r, row.valid_tokens[r], work[r],
               row.index[r]);
    fmt::print("{}positions  {}\n", indent, local(row, row.positions, r));
    if (row.packed) fmt::print("{}doc ids    {}\n", indent, local_doc_ids(row, r));
    if (spec.layout == "thd") fmt::print("{}cu_seqlens {}\n", indent, row.local_cu_seqlens[r]);
    if (!row.magi_chunks.empty()) fmt::print("{}chunks     {}\n", indent, row.magi_chunks[r]);
  }
}

int run_layout(const LayoutOptions& options) {
  const bool has_seq_len = options.seq_len_option->count() > 0;
  const bool has_doc_lens = options.doc_lens_option->count() > 0;
  CPLAB_CHECK(
      has_seq_len != has_doc_lens,
      "give exactly one of --seq-len S (a BSHD row) and --doc-lens 5,3,8 (a packed row); got {}",
      has_seq_len ? "both" : "neither");
  validate_spec(options.spec);
  RowPlan row;
  if (has_seq_len) {
    CPLAB_CHECK(options.seq_len >= 0, "--seq-len must be non-negative, got {}", options.seq_len);
    row = reference::plan_row(options.spec, options.seq_len);
  } else {
    // One packed row with the documents back to back.
    const std::vector<std::int64_t> docs = parse_doc_lens(options.doc_lens);
    std::int64_t total = 0;
    for (std::int64_t len : docs) total += len;
    row = reference::plan_row(options.spec, total, &docs);
  }
  const std::vector<std::int64_t> work = reference::causal_work(row);
  if (options.json) {
    print_json(options.spec, row, work);
  } else {
    print_table(options.spec, row, work);
  }
  return 0;
}

}  // namespace

Command add_layout_command(CLI::App& app) {
  auto options = std::make_shared<LayoutOptions>();
  CLI::App* sub = app.add_subcommand(
      "layout", "Show which rank holds which token of one row under a CP layout");
  sub->add_option("--layout", options->spec.layout,
                  fmt::format("Layout: {}", fmt::join(reference::layout_names(), ", ")))
      ->required();
  sub->add_option("--cp", options->spec.cp, "CP size C (ranks in the group)")->required();
  options->seq_len_option =
      sub->add_option("--seq-len", options->seq_len, "Length S of one BSHD row");
  options->doc_lens_option = sub->add_option(
      "--doc-lens", options->doc_lens, "One packed row: document lengths back to back, e.g. 5,3,8");
  sub->add_option("--pad-multiple", options->spec.pad_multiple,
                  "contiguous: pad multiple m (D = C·m)")
      ->capture_default_str();
  sub->add_option("--chunk-size", options->spec.chunk_size, "magi: chunk size K")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print one JSON object instead of the table");
  return {sub, [options] { return run_layout(*options); }};
}

}  // namespace cplab::cli
