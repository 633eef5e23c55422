#pragma once
// The reference plan: for a batch and a LayoutSpec, every row's padded stream and index maps, built
// by construction (list the chunks, concatenate). Production paths must not call this.
#include "core/batch.hpp"
#include "core/shard_plan.hpp"

namespace cplab::reference {

// What a layout's reference contributes (one entry per layout file in reference/layouts/). The
// options it reads are those its declaration lists (layouts/ID.cpp); its plan does not change
// with an option it does not declare (tests/reference/layouts_test.cpp).
struct LayoutInfo {
  const char* name;
  // Builds one row's plan. `row` is the caller's row shape: S, and for packed rows the documents.
  // pinned_len > 0 fixes L, as a caller with a fixed row length does; a layout that cannot use it
  // (thd: not a multiple of 2C, or too short for the documents; others: not their own L) throws.
  RowPlan (*plan_row)(const LayoutSpec& spec, std::int64_t caller_len,
                      const std::vector<std::int64_t>* seq_lens,
                      const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len);
};

const std::vector<LayoutInfo>& layouts();                // every registered layout, in name order
const LayoutInfo& layout_info(const std::string& name);  // throws listing the known names
std::vector<std::string> layout_names();

// Validates spec and batch (validate_spec, validate_batch, microbatches divides B, packed rows: one
// per microbatch) and plans every row. BSHD rows share one L; each packed row is planned on its own
// (thd rows may differ in L: the verbs then take one microbatch at a time, see microbatch_plan).
ShardPlan plan(const LayoutSpec& spec, const Batch& batch);
// One row without a batch: a BSHD row of S tokens (seq_lens null) or a packed row of documents.
// seq_lens_padded null or empty: each document occupies its real length. pinned_len as in
// LayoutInfo::plan_row.
RowPlan plan_row(const LayoutSpec& spec, std::int64_t caller_len,
                 const std::vector<std::int64_t>* seq_lens = nullptr,
                 const std::vector<std::int64_t>* seq_lens_padded = nullptr,
                 std::int64_t pinned_len = 0);

// Microbatch m of a plan (SPEC §4) as a plan of its own: its rows, microbatches = 1. The loss of a
// microbatch is normalised over that microbatch's tokens, so per-microbatch checks use this.
// The verbs need rows of one length; packed thd rows of different L are handled this way.
ShardPlan microbatch_plan(const ShardPlan& plan, std::int64_t m);

}  // namespace cplab::reference
