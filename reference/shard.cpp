// The sharder's verbs of SPEC §4-§5 on the global view: shard a batch per microbatch and rank,
// shard or gather any token tensor, and the gather's backward.
#include "core/token_moves.hpp"
#include "reference/plan.hpp"
#include "reference/plan_lengths.hpp"
#include "reference/verbs.hpp"

namespace cplab::reference {
namespace {

// Position ids computed before partitioning (the plan's), for a batch that has none. Under
// PadPolicy::zero the slots the plan added hold 0, as if the caller's arange had been padded.
TokenField plan_positions(const ShardPlan& plan, const PlanLengths& lengths) {
  Tensor positions(DType::i64, {lengths.rows, lengths.padded});
  auto out = positions.data<std::int64_t>();
  const bool zero_policy = plan.spec.pad_policy == PadPolicy::zero;
  for (std::int64_t b = 0; b < lengths.rows; ++b) {
    const RowPlan& row = plan.rows[b];
    for (std::int64_t g = 0; g < lengths.padded; ++g) {
      out[b * lengths.padded + g] = zero_policy && row.caller_pos[g] < 0 ? 0 : row.positions[g];
    }
  }
  return default_token_field(keys::position_ids, std::move(positions));
}

// Rows [begin, end) of a batch: token keys (a shared [1,S] row stays shared), documents, and the
// pass-through tensors unchanged.
Batch batch_rows(const Batch& batch, std::int64_t begin, std::int64_t end) {
  Batch part = slice_token_rows(batch, begin, end);
  if (batch.packed()) {
    part.seq_lens.assign(batch.seq_lens.begin() + begin, batch.seq_lens.begin() + end);
    if (!batch.seq_lens_padded.empty()) {
      part.seq_lens_padded.assign(batch.seq_lens_padded.begin() + begin,
                                  batch.seq_lens_padded.begin() + end);
    }
  }
  return part;
}

// Multiplies every element by `factor` (gradients: f32, bf16, f16 only).
void scale_gradient(Tensor& t, double factor) {
  const DType dtype = t.dtype();
  CPLAB_CHECK(dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16,
              "gradients are f32, bf16 or f16; got {}", tensor_brief(t));
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * factor);
}

// One microbatch on every rank: each token key padded to the global stream and cut per rank.
std::vector<Batch> shard_microbatch(const ShardPlan& plan, const Batch& batch) {
  const PlanLengths lengths = plan_lengths(plan);
  std::vector<Batch> ranks(static_cast<std::size_t>(lengths.cp));
  const std::string primary = batch.primary();
  auto hand_out = [&](const std::string& name, const TokenField& field, const Tensor& global) {
    for (std::int64_t r = 0; r < lengths.cp; ++r) {
      TokenField local = field;
      local.value = select_rank(plan, global, field.seq_dim, r);
      ranks[r].tokens[name] = std::move(local);
    }
  };
  for (const auto& [name, field] : batch.tokens) {
    if (name == primary && !plan.spec.shard_primary) {
      // Kept global, in caller coordinates, for later splicing and sharding (SPEC §4).
      for (Batch& local : ranks) local.tokens[name] = field;
      continue;
    }
    hand_out(name, field, pad_to_global(plan, field));
  }
  if (!batch.has(keys::position_ids)) {
    const TokenField positions = plan_positions(plan, lengths);
    hand_out(keys::position_ids, positions, positions.value);
  }
  for (Batch& local : ranks) local.passthrough = batch.passthrough;
  return ranks;
}

}  // namespace

std::vector<std::vector<Batch>> shard_batch(const ShardPlan& plan, const Batch& batch) {
  validate_batch(batch);
  CPLAB_CHECK(batch.rows() == static_cast<std::int64_t>(plan.rows.size()),
              "shard_batch: the batch has B={} rows, the plan ({}) {}", batch.rows(),
              spec_brief(plan.spec), plan.rows.size());
  // Microbatch by microbatch: packed rows are each partitioned on their own and may differ in L.
  const std::int64_t per = plan.rows_per_microbatch();
  std::vector<std::vector<Batch>> sharded;
  for (std::int64_t m = 0; m < plan.spec.microbatches; ++m) {
    const ShardPlan part = microbatch_plan(plan, m);
    const Batch rows = batch_rows(batch, m * per, (m + 1) * per);
    CPLAB_CHECK(rows.seq_len() == plan_lengths(part).caller,
                "shard_batch: the batch has S={}, the plan S={}", rows.seq_len(),
                plan_lengths(part).caller);
    sharded.push_back(shard_microbatch(part, rows));
  }
  return sharded;
}

Tensor shard_token_tensor(const ShardPlan& plan, const Tensor& value, std::int64_t seq_dim,
                          std::optional<double> fill, std::int64_t rank) {
  const PlanLengths lengths = plan_lengths(plan);
  const TokenAxes axes = token_axes(value, seq_dim, "shard_token_tensor");
  CPLAB_CHECK(axes.rows == lengths.rows,
              "shard_token_tensor: {} has {} rows on dim {}; the plan has B={}",
              tensor_brief(value), axes.rows, seq_dim - 1, lengths.rows);
  // Packed rows of the caller's length are always the caller's THD rows (documents at their caller
  // offsets), even when L happens to equal S: thd may move their tokens.
  const bool packed = plan.rows[0].packed;
  const bool caller_rows = axes.seq == lengths.caller && (packed || axes.seq != lengths.padded);
  if (!caller_rows) {
    CPLAB_CHECK(axes.seq == lengths.padded,
                "shard_token_tensor: {} has {} tokens on seq dim {}: neither the padded length "
                "L={} nor the caller length S={}",
                tensor_brief(value), axes.seq, seq_dim, lengths.padded, lengths.caller);
    return select_rank(plan, value, seq_dim, rank);
  }
  CPLAB_CHECK(packed || fill.has_value(),
              "shard_token_tensor: {} has the caller length S={} on seq dim {}; padding it to L={} "
              "needs an explicit fill",
              tensor_brief(value), axes.seq, seq_dim, lengths.padded);
  const TokenField field{.value = value,
                         .seq_dim = seq_dim,
                         .rule = PadRule::constant,
                         .pad_value = fill.value_or(0.0)};
  return select_rank(plan, pad_to_global(plan, field), seq_dim, rank);
}

Tensor gather_token_tensor(const ShardPlan& plan, const std::vector<Tensor>& locals,
                           std::int64_t seq_dim, bool trim) {
  Tensor global = place_ranks(plan, locals, seq_dim);
  return trim ? trim_to_caller(plan, global, seq_dim) : global;
}

Tensor gather_token_tensor_backward(const ShardPlan& plan, const Tensor& grad_gathered,
                                    std::int64_t seq_dim, bool trim, std::int64_t rank) {
  const PlanLengths lengths = plan_lengths(plan);
  const TokenAxes axes = token_axes(grad_gathered, seq_dim, "gather_token_tensor_backward");
  const std::int64_t expected = trim ? lengths.caller : lengths.padded;
  CPLAB_CHECK(axes.seq == expected && axes.rows == lengths.rows,
              "gather_token_tensor_backward: gradient {} has {} rows and {} tokens on seq dim {}; "
              "the gathered tensor had B={} rows of {}={}",
              tensor_brief(grad_gathered), axes.rows, axes.seq, seq_dim, lengths.rows,
              trim ? "S" : "L", expected);
  Tensor global = grad_gathered;
  if (trim) {
    // Slots the trim dropped (padding) got no gradient.
    std::vector<std::vector<std::int64_t>> maps;
    for (const RowPlan& row : plan.rows) maps.push_back(row.caller_pos);
    global = take_tokens(grad_gathered, seq_dim, maps, lengths.padded);
  }
  // Reduce-scatter of a gradient every rank holds identically: each of the C ranks sends the owner
  // the same slice, so the owner receives C times it.
  Tensor local = select_rank(plan, global, seq_dim, rank);
  scale_gradient(local, static_cast<double>(lengths.cp));
  return local;
}

}  // namespace cplab::reference
