// `cplab check --gathered`: a gather_token_tensor output against the batch it came from, trimmed
// (the caller's S) or not (the padded L, pads filled by the conventions the shards follow).
#include <fmt/format.h>

#include <algorithm>

#include "check/shard_check.hpp"
#include "check/slot_runs.hpp"
#include "check/token_values.hpp"
#include "core/error.hpp"
#include "core/token_moves.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::check {
namespace {

// One row of `actual` against the same row of `expected` (same length); located by value.
std::vector<SlotDiff> row_diffs(const Tensor& expected, const TokenAxes& ea, std::int64_t erow,
                                const Tensor& actual, const TokenAxes& aa, std::int64_t arow,
                                const std::vector<std::int64_t>* caller_pos) {
  const ValueIndex where(expected, ea, erow);
  std::vector<SlotDiff> slots;
  for (std::int64_t k = 0; k < ea.seq; ++k) {
    SlotDiff s;
    s.expected = token_at(expected, ea, erow, k);
    s.actual = token_at(actual, aa, arow, k);
    if (same_token(s.expected, s.actual)) continue;
    s.k = k;
    s.g = k;
    s.pad = caller_pos != nullptr && (*caller_pos)[k] < 0;
    const bool after = !slots.empty() && slots.back().k == k - 1;
    s.held = where.locate(s.actual, after ? slots.back().held : -1);
    slots.push_back(std::move(s));
  }
  return slots;
}

}  // namespace

void check_gathered(const Batch& batch, const io::TensorFile& file, Outcome& outcome) {
  LayoutSpec spec = outcome.spec;
  spec.microbatches = batch.packed() ? batch.rows() : 1;
  const ShardPlan plan = reference::plan(spec, batch);
  const std::int64_t per = plan.rows_per_microbatch();
  for (const auto& [stored, actual] : file.tensors) {
    const std::string name = stored.empty() ? batch.primary() : stored;
    if (!batch.has(name)) {
      Difference d;
      d.key = name;
      d.kind = DiffKind::extra_key;
      d.text = fmt::format("gathered {}: {} is not a token key of the batch", name,
                           tensor_brief(actual));
      outcome.diffs.push_back(std::move(d));
      outcome.score += 1;
      continue;
    }
    const TokenField& field = batch.tokens.at(name);
    const TokenAxes caller = token_axes(field.value, field.seq_dim, "gathered");
    const bool has_row_dim = actual.dim() > field.seq_dim;
    const TokenAxes held =
        has_row_dim ? token_axes(actual, field.seq_dim, "gathered") : TokenAxes{};
    const bool trimmed = has_row_dim && held.seq == caller.seq;
    const std::int64_t rows = batch.rows();
    for (std::int64_t m = 0; m < spec.microbatches; ++m) {
      const ShardPlan part = reference::microbatch_plan(plan, m);
      const Batch slice = slice_token_rows(batch, m * per, (m + 1) * per);
      const Tensor expected = trimmed ? slice.tokens.at(name).value
                                      : reference::pad_to_global(part, slice.tokens.at(name));
      const TokenAxes ea = token_axes(expected, field.seq_dim, "gathered");
      const bool fits = has_row_dim && held.seq == ea.seq && held.rows == rows &&
                        held.outer == ea.outer && held.inner == ea.inner;
      if (!fits) {
        Difference d;
        d.key = name;
        d.kind = DiffKind::shape;
        d.text = fmt::format(
            "gathered {}: shape {}, expected B={} rows of the caller's S={} (trimmed) or the "
            "padded L={}",
            name, shape_str(actual.shape()), rows, caller.seq, part.rows[0].padded_len);
        outcome.diffs.push_back(std::move(d));
        outcome.score += rows * caller.seq;
        break;
      }
      for (std::int64_t j = 0; j < per; ++j) {
        const std::int64_t b = m * per + j;
        const auto* caller_pos = trimmed ? nullptr : &part.rows[j].caller_pos;
        const std::vector<SlotDiff> slots =
            row_diffs(expected, ea, std::min(j, ea.rows - 1), actual, held, b, caller_pos);
        const RunContext where{.rank = -1,
                               .key = trimmed ? name + " (trimmed)" : name,
                               .row = b,
                               .show_row = rows > 1,
                               .pad_rule = "the pad convention"};
        for (Difference& d : group_runs(where, slots)) outcome.diffs.push_back(std::move(d));
        outcome.score += static_cast<std::int64_t>(slots.size());
      }
    }
  }
}

}  // namespace cplab::check
