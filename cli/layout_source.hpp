#pragma once
// Where `cplab layout` gets the rows it shows: one BSHD row (--seq-len), one packed row
// (--doc-lens), or every row of a batch saved with torch.save (--batch), planned by the reference.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/option_flags.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"

namespace cplab::cli {

// The parsed arguments; has_* says whether the option was given at all.
struct LayoutSourceArgs {
  bool has_seq_len = false, has_doc_lens = false, has_batch = false, has_row = false;
  std::int64_t seq_len = 0;
  std::string doc_lens;
  std::string batch_path;
  std::int64_t row = 0;
  // The layout options given as flags, applied once S is known (auto values need it; null: none).
  const OptionFlags* options = nullptr;
};

struct LayoutSource {
  LayoutSpec spec;            // the spec the rows were planned with (option flags applied)
  std::vector<RowPlan> rows;  // one for --seq-len / --doc-lens; every row of the batch for --batch
  std::size_t chosen = 0;     // the row the table, the picture and the single-row JSON show
  bool from_batch = false;
  std::string description;  // where the chosen row came from, for titles: "batch.pt row 1 of 4"
  // With --batch: each row's labels in the padded global stream (empty without a labels key).
  std::vector<std::vector<std::int64_t>> labels;
};

// Exactly one of --seq-len, --doc-lens, --batch; --row only with --batch. Throws cplab::Error with
// one line on bad combinations, unreadable batch files and rows out of range.
LayoutSource read_layout_source(const LayoutSpec& spec, const LayoutSourceArgs& args);

// "5,3,8" → {5, 3, 8}; anything that is not a list of non-negative integers is an error.
std::vector<std::int64_t> parse_doc_lens(const std::string& text);

}  // namespace cplab::cli
