#pragma once
// A layout and its options as the module's functions take them (keyword arguments), and the
// plans they make of a row or a batch.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/layout_option.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"

namespace cplab::python {

// Every option a layout may take; unset ones keep their defaults.
struct LayoutOptions {
  std::optional<std::int64_t> pad_id;
  std::optional<std::string> pad_policy;
  // The layouts' own options given, by declaration (core/layout_option.hpp).
  std::vector<std::pair<const layouts::LayoutOption*, std::int64_t>> given;
};

// The keyword arguments as LayoutOptions: each keyword must name a declared layout option (an
// int; a switch takes a bool too), else a one-line error lists the options there are.
LayoutOptions layout_options(std::optional<std::int64_t> pad_id,
                             std::optional<std::string> pad_policy, const pybind11::kwargs& kwargs);

// Validated (validate_spec): an unknown layout lists the known ones.
LayoutSpec make_spec(const std::string& layout, std::int64_t cp, const LayoutOptions& options);

// The rows a plan is made of: a BSHD row of seq_len tokens, or a packed row of documents.
struct RowShape {
  std::optional<std::int64_t> seq_len;
  std::optional<std::vector<std::int64_t>> doc_lens, doc_lens_padded;
};
// rows copies of one row's plan (BSHD rows share one layout; a packed shape is one row).
ShardPlan plan_rows(const LayoutSpec& spec, const RowShape& shape, std::int64_t rows);

// The batch's own plan (reference::plan): a packed batch of one row, or BSHD rows.
ShardPlan plan_batch(const LayoutSpec& spec, const Batch& batch);

}  // namespace cplab::python
