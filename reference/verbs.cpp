// The global coordinate verbs: caller rows → padded global stream → rank shards, and back.
#include "reference/verbs.hpp"

#include "core/token_moves.hpp"
#include "reference/plan_lengths.hpp"

namespace cplab::reference {

PlanLengths plan_lengths(const ShardPlan& plan) {
  CPLAB_CHECK(!plan.rows.empty(), "the plan ({}) has no rows", spec_brief(plan.spec));
  PlanLengths lengths{.rows = static_cast<std::int64_t>(plan.rows.size()),
                      .caller = plan.rows[0].caller_len,
                      .padded = plan.rows[0].padded_len,
                      .cp = plan.rows[0].cp};
  for (std::size_t b = 1; b < plan.rows.size(); ++b) {
    const RowPlan& row = plan.rows[b];
    CPLAB_CHECK(row.caller_len == lengths.caller && row.padded_len == lengths.padded &&
                    row.cp == lengths.cp,
                "plan row {} has S={} L={} cp={}, row 0 has S={} L={} cp={}: token tensors need "
                "one shape (take packed rows one microbatch at a time: microbatch_plan)",
                b, row.caller_len, row.padded_len, row.cp, lengths.caller, lengths.padded,
                lengths.cp);
  }
  return lengths;
}

namespace {

// SPEC §2 pad values of the slots the plan added (caller_pos = -1), in stream order so that
// continued positions can read the slot before.
void fill_added_slots(const ShardPlan& plan, const TokenField& field, Tensor& global) {
  const TokenAxes axes = token_axes(global, field.seq_dim, "pad_to_global");
  const bool zero_policy = plan.spec.pad_policy == PadPolicy::zero;
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    for (std::int64_t b = 0; b < axes.rows; ++b) {
      const std::vector<std::int64_t>& caller_pos = plan.rows[b].caller_pos;
      for (std::int64_t g = 0; g < axes.seq; ++g) {
        if (caller_pos[g] >= 0) continue;
        for (std::int64_t e = 0; e < axes.inner; ++e) {
          double value = field.pad_value;
          if (field.rule == PadRule::pad_token) {
            value = zero_policy ? 0.0 : static_cast<double>(plan.spec.pad_token_id);
          } else if (field.rule == PadRule::continue_positions) {
            value = zero_policy || g == 0 ? 0.0 : global.get(axes.flat(o, b, g - 1, e)) + 1.0;
          }
          global.set(axes.flat(o, b, g, e), value);
        }
      }
    }
  }
}

}  // namespace

Tensor pad_to_global(const ShardPlan& plan, const TokenField& field) {
  const PlanLengths lengths = plan_lengths(plan);
  const TokenAxes axes = token_axes(field.value, field.seq_dim, "pad_to_global");
  CPLAB_CHECK(axes.seq == lengths.caller,
              "pad_to_global: {} has {} tokens on seq dim {}; the caller rows have S={}",
              tensor_brief(field.value), axes.seq, field.seq_dim, lengths.caller);
  std::vector<std::vector<std::int64_t>> maps;
  for (const RowPlan& row : plan.rows) maps.push_back(row.caller_pos);
  Tensor global = take_tokens(field.value, field.seq_dim, maps, lengths.padded);
  fill_added_slots(plan, field, global);
  return global;
}

Tensor select_rank(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim,
                   std::int64_t rank) {
  const PlanLengths lengths = plan_lengths(plan);
  const TokenAxes axes = token_axes(global, seq_dim, "select_rank");
  CPLAB_CHECK(rank >= 0 && rank < lengths.cp, "rank {} out of range for cp={}", rank, lengths.cp);
  CPLAB_CHECK(
      axes.seq == lengths.padded && axes.rows == lengths.rows,
      "select_rank: {} has {} rows and {} tokens on seq dim {}; the plan has B={} rows of L={}",
      tensor_brief(global), axes.rows, axes.seq, seq_dim, lengths.rows, lengths.padded);
  std::vector<std::vector<std::int64_t>> maps;
  for (const RowPlan& row : plan.rows) maps.push_back(row.index[rank]);
  return take_tokens(global, seq_dim, maps, lengths.padded / lengths.cp);
}

Tensor place_ranks(const ShardPlan& plan, const std::vector<Tensor>& locals, std::int64_t seq_dim) {
  const PlanLengths lengths = plan_lengths(plan);
  CPLAB_CHECK(static_cast<std::int64_t>(locals.size()) == lengths.cp,
              "place_ranks: {} local shards for cp={}", locals.size(), lengths.cp);
  const std::int64_t local_len = lengths.padded / lengths.cp;
  for (std::size_t r = 0; r < locals.size(); ++r) {
    const TokenAxes axes = token_axes(locals[r], seq_dim, "place_ranks");
    CPLAB_CHECK(axes.seq == local_len && axes.rows == lengths.rows,
                "place_ranks: rank {} shard {} has {} rows and {} tokens on seq dim {}; expected "
                "B={} rows of ℓ=L/C={}/{}={}",
                r, tensor_brief(locals[r]), axes.rows, axes.seq, seq_dim, lengths.rows,
                lengths.padded, lengths.cp, local_len);
  }
  Tensor global(locals[0].dtype(),
                with_rows_and_seq(locals[0], seq_dim, lengths.rows, lengths.padded));
  for (std::size_t r = 0; r < locals.size(); ++r) {
    std::vector<std::vector<std::int64_t>> maps;
    for (const RowPlan& row : plan.rows) maps.push_back(row.index[r]);
    put_tokens(locals[r], seq_dim, maps, global);
  }
  return global;
}

Tensor trim_to_caller(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim) {
  const PlanLengths lengths = plan_lengths(plan);
  const TokenAxes axes = token_axes(global, seq_dim, "trim_to_caller");
  CPLAB_CHECK(
      axes.seq == lengths.padded && axes.rows == lengths.rows,
      "trim_to_caller: {} has {} rows and {} tokens on seq dim {}; the plan has B={} rows of L={}",
      tensor_brief(global), axes.rows, axes.seq, seq_dim, lengths.rows, lengths.padded);
  // Caller slots no global slot maps back to (thd drops the caller's own document padding) stay 0.
  std::vector<std::vector<std::int64_t>> maps;
  for (const RowPlan& row : plan.rows) {
    std::vector<std::int64_t> caller_to_global(static_cast<std::size_t>(lengths.caller), -1);
    for (std::int64_t g = 0; g < lengths.padded; ++g) {
      if (row.caller_pos[g] >= 0) caller_to_global[row.caller_pos[g]] = g;
    }
    maps.push_back(std::move(caller_to_global));
  }
  return take_tokens(global, seq_dim, maps, lengths.caller);
}

}  // namespace cplab::reference
