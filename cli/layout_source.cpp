#include "cli/layout_source.hpp"

#include <fmt/format.h>

#include <charconv>

#include "cli/errors.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/token_moves.hpp"
#include "io/torch_batch.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::cli {

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
  limits::check_documents(lens, "--doc-lens");  // count and sum, overflow-safe
  return lens;
}

namespace {

std::string given_sources(const LayoutSourceArgs& args) {
  std::vector<std::string> given;
  if (args.has_seq_len) given.emplace_back("--seq-len");
  if (args.has_doc_lens) given.emplace_back("--doc-lens");
  if (args.has_batch) given.emplace_back("--batch");
  if (given.empty()) return "neither";
  if (given.size() == 3) return "all three";
  return fmt::format("both {} and {}", given[0], given[1]);
}

// Row `local_row` of a padded global tensor (mRoPE [3,B,L]: its first plane).
std::vector<std::int64_t> row_values(const Tensor& global, std::int64_t seq_dim,
                                     std::int64_t local_row) {
  const TokenAxes axes = token_axes(global, seq_dim, "row_values");
  std::vector<std::int64_t> out(static_cast<std::size_t>(axes.seq));
  for (std::int64_t g = 0; g < axes.seq; ++g)
    out[g] = static_cast<std::int64_t>(global.get(axes.flat(0, local_row, g)));
  return out;
}

// Every row of a batch key in the padded global stream, padded as the sharder pads it.
std::vector<std::vector<std::int64_t>> global_rows(const Batch& batch, const ShardPlan& plan,
                                                   const std::string& key) {
  std::vector<std::vector<std::int64_t>> rows;
  if (!batch.has(key)) return rows;
  if (!batch.packed()) {
    const TokenField& field = batch.tokens.at(key);
    const Tensor global = reference::pad_to_global(plan, field);
    for (std::size_t b = 0; b < plan.rows.size(); ++b)
      rows.push_back(row_values(global, field.seq_dim, static_cast<std::int64_t>(b)));
    return rows;
  }
  for (std::size_t b = 0; b < plan.rows.size(); ++b) {
    const auto row = static_cast<std::int64_t>(b);
    const Batch one = slice_token_rows(batch, row, row + 1);
    const TokenField& field = one.tokens.at(key);
    const Tensor global = reference::pad_to_global(reference::microbatch_plan(plan, row), field);
    rows.push_back(row_values(global, field.seq_dim, 0));
  }
  return rows;
}

LayoutSpec with_options(const LayoutSpec& spec, const LayoutSourceArgs& args,
                        std::int64_t seq_len) {
  LayoutSpec out =
      args.options != nullptr ? apply_option_flags(spec, *args.options, seq_len) : spec;
  validate_spec(out);
  return out;
}

LayoutSource batch_source(const LayoutSpec& given, const LayoutSourceArgs& args) {
  // Checked before touching the file, so that a build without libtorch says so and not "bad file".
  CPLAB_CHECK(io::torch_available(),
              "--batch {}: this cplab cannot read torch.save files (it has no libtorch); give the "
              "row with --seq-len or --doc-lens instead",
              args.batch_path);
  io::SkippedEntries skipped;
  const Batch batch = io::load_torch_batch(args.batch_path, &skipped);
  note_skipped_entries(args.batch_path, skipped);
  const LayoutSpec spec = with_options(given, args, batch.seq_len());
  const std::int64_t rows = batch.rows();
  CPLAB_CHECK(rows >= 1, "--batch {}: the batch holds no rows", args.batch_path);
  CPLAB_CHECK(args.row >= 0 && args.row < rows, "--row {} is out of range: {} holds B={} rows",
              args.row, args.batch_path, rows);
  // A packed batch is one packed row per microbatch (SPEC §4), so each row is planned as its own
  // microbatch; BSHD rows share one layout whatever the microbatching.
  LayoutSpec batch_spec = spec;
  batch_spec.microbatches = batch.packed() ? rows : 1;
  LayoutSource source;
  source.spec = spec;
  const ShardPlan plan = reference::plan(batch_spec, batch);
  source.rows = plan.rows;
  // A batch that brings its own position_ids is shown with them, so that the view and the shard
  // agree (a row starting at offset 18 shows 18, 19, ...).
  const auto positions = global_rows(batch, plan, keys::position_ids);
  for (std::size_t b = 0; b < positions.size(); ++b) source.rows[b].positions = positions[b];
  source.labels = global_rows(batch, plan, keys::labels);
  source.chosen = static_cast<std::size_t>(args.row);
  source.from_batch = true;
  source.description = fmt::format("{} row {} of {} ({})", args.batch_path, args.row, rows,
                                   batch.packed() ? fmt::format("packed, S={}", batch.seq_len())
                                                  : fmt::format("BSHD, S={}", batch.seq_len()));
  return source;
}

}  // namespace

LayoutSource read_layout_source(const LayoutSpec& given, const LayoutSourceArgs& args) {
  const int sources = int{args.has_seq_len} + int{args.has_doc_lens} + int{args.has_batch};
  CPLAB_CHECK(sources == 1,
              "give exactly one of --seq-len S (a BSHD row), --doc-lens 5,3,8 (a packed row) and "
              "--batch FILE.pt (rows saved with torch.save); got {}",
              given_sources(args));
  CPLAB_CHECK(args.has_batch || !args.has_row,
              "--row {} chooses a row of --batch FILE.pt; --seq-len and --doc-lens give one row",
              args.row);
  validate_spec(given);
  if (args.has_batch) return batch_source(given, args);
  LayoutSource source;
  if (args.has_seq_len) {
    CPLAB_CHECK(args.seq_len >= 0, "--seq-len must be non-negative, got {}", args.seq_len);
    source.spec = with_options(given, args, args.seq_len);
    source.rows.push_back(reference::plan_row(source.spec, args.seq_len));
    source.description = fmt::format("BSHD row, S={}", args.seq_len);
  } else {
    // One packed row with the documents back to back.
    const std::vector<std::int64_t> docs = parse_doc_lens(args.doc_lens);
    const std::int64_t total = limits::sum(docs, "--doc-lens");
    source.spec = with_options(given, args, total);
    source.rows.push_back(reference::plan_row(source.spec, total, &docs));
    source.description = fmt::format("packed row, documents {}", args.doc_lens);
  }
  return source;
}

}  // namespace cplab::cli
