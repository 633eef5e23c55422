// The checks every verb of the contract makes of its arguments before any implementation's hook
// runs: one place, so that the twin, the GPU path and every mutant refuse the same arguments in the
// same words, and a hook indexes only by what has been found to fit.
#include "implementation/implementation.hpp"

#include "core/fill.hpp"
#include "core/token_moves.hpp"

namespace cplab {
namespace {

// Verbs that read the layout's maps against this rank's neighbours: the comm must be the group the
// layout was recorded for, and this rank its rank.
void check_comm_is_layouts(const Comm& comm, const ShardLayout& layout, const char* verb) {
  CPLAB_CHECK(comm.size() == layout.cp && comm.rank() == layout.rank,
              "{}: the comm is rank {} of {}, the layout rank {} of {}", verb, comm.rank(),
              comm.size(), layout.rank, layout.cp);
}

// A local shard [..., B, ℓ, ...] on seq_dim, as this rank holds it.
void check_local_shard(const ShardLayout& layout, const Tensor& t, std::int64_t seq_dim,
                       const char* verb) {
  const TokenAxes axes = token_axes(t, seq_dim, verb);
  CPLAB_CHECK(axes.rows == layout.rows && axes.seq == layout.local_len(),
              "{}: {} has {} rows of {} tokens; this rank holds B={} rows of ℓ=L/C={}/{}={}", verb,
              tensor_brief(t), axes.rows, axes.seq, layout.rows, layout.padded_len, layout.cp,
              layout.local_len());
}

// The implementation has the Ulysses all-to-all (`unsupported` is its ulysses_unsupported()), the
// Ulysses group is the CP group the layout was recorded for, and its head counts split over it
// (SPEC §10.5).
void check_ulysses_group(const std::string& unsupported, const Comm& comm,
                         const ShardLayout& layout, const UlyssesHeads& heads, const char* verb) {
  CPLAB_CHECK(unsupported.empty(), "{}", unsupported);
  check_recorded_layout(layout, verb);
  CPLAB_CHECK(layout.cp == comm.size(),
              "{}: the layout is for C = {} ranks, the group has U = {}; the Ulysses group must be "
              "the CP group",
              verb, layout.cp, comm.size());
  check_ulysses_heads(heads, comm.size());
}

}  // namespace

std::vector<RankShard> Implementation::shard(Comm& comm, const LayoutSpec& spec,
                                             const Batch& batch) {
  CPLAB_CHECK(comm.size() == spec.cp, "shard: the comm has {} ranks, the spec ({}) cp={}",
              comm.size(), spec.layout, spec.cp);
  return do_shard(comm, spec, batch);
}

Tensor Implementation::shard_primary_later(Comm& comm, const ShardLayout& layout,
                                           const Batch& micro_batch) {
  check_recorded_layout(layout, "shard_primary_later");
  const std::string primary = micro_batch.primary();
  const TokenField& field = micro_batch.tokens.at(primary);
  const TokenAxes axes = token_axes(field.value, field.seq_dim, "shard_primary_later");
  CPLAB_CHECK(
      axes.rows == layout.rows && axes.seq == layout.caller_len,
      "shard_primary_later: {} {} has {} rows of {} tokens; the microbatch was B={} rows of S={}",
      primary, tensor_brief(field.value), axes.rows, axes.seq, layout.rows, layout.caller_len);
  return do_shard_primary_later(comm, layout, micro_batch);
}

Tensor Implementation::shard_token_tensor(Comm& comm, const ShardLayout& layout,
                                          const Tensor& value, std::int64_t seq_dim,
                                          std::optional<double> fill) {
  check_recorded_layout(layout, "shard_token_tensor");
  const TokenAxes axes = token_axes(value, seq_dim, "shard_token_tensor");
  CPLAB_CHECK(axes.rows == layout.rows,
              "shard_token_tensor: {} has {} rows on dim {}; the layout has B={}",
              tensor_brief(value), axes.rows, seq_dim - 1, layout.rows);
  // Packed rows of the caller's length are the caller's THD rows, even when L happens to be S.
  const bool caller_rows =
      axes.seq == layout.caller_len && (layout.packed || axes.seq != layout.padded_len);
  if (!caller_rows) {
    CPLAB_CHECK(axes.seq == layout.padded_len,
                "shard_token_tensor: {} has {} tokens on seq dim {}: neither the padded length "
                "L={} nor the caller length S={}",
                tensor_brief(value), axes.seq, seq_dim, layout.padded_len, layout.caller_len);
  } else {
    CPLAB_CHECK(layout.packed || fill.has_value(),
                "shard_token_tensor: {} has the caller length S={} on seq dim {}; padding it to "
                "L={} needs an explicit fill",
                tensor_brief(value), axes.seq, seq_dim, layout.padded_len);
  }
  return do_shard_token_tensor(comm, layout, value, seq_dim, fill);
}

Tensor Implementation::gather_token_tensor(Comm& comm, const ShardLayout& layout,
                                           const Tensor& local, std::int64_t seq_dim, bool trim) {
  check_recorded_layout(layout, "gather_token_tensor");
  check_local_shard(layout, local, seq_dim, "gather_token_tensor");
  return do_gather_token_tensor(comm, layout, local, seq_dim, trim);
}

Tensor Implementation::gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                                    const Tensor& grad_gathered,
                                                    std::int64_t seq_dim, bool trim) {
  check_recorded_layout(layout, "gather_token_tensor_backward");
  const TokenAxes axes = token_axes(grad_gathered, seq_dim, "gather_token_tensor_backward");
  const std::int64_t expected = trim ? layout.caller_len : layout.padded_len;
  CPLAB_CHECK(axes.rows == layout.rows && axes.seq == expected,
              "gather_token_tensor_backward: gradient {} has {} rows of {} tokens; the gathered "
              "tensor had B={} rows of {}={}",
              tensor_brief(grad_gathered), axes.rows, axes.seq, layout.rows, trim ? "S" : "L",
              expected);
  return do_gather_token_tensor_backward(comm, layout, grad_gathered, seq_dim, trim);
}

Tensor Implementation::shift_token_tensor(Comm& comm, const ShardLayout& layout,
                                          const Tensor& local, std::int64_t seq_dim,
                                          std::int64_t depth, double fill) {
  const std::string why = shift_unsupported();
  CPLAB_CHECK(why.empty(), "{}", why);
  check_recorded_layout(layout, "shift_token_tensor");
  CPLAB_CHECK(depth >= 1, "shift_token_tensor: the depth must be at least 1, not {}", depth);
  CPLAB_CHECK(holds_exactly(local.dtype(), fill),
              "shift_token_tensor: the fill {} is not a {} value", fill, dtype_name(local.dtype()));
  check_comm_is_layouts(comm, layout, "shift_token_tensor");
  const TokenAxes axes = token_axes(local, seq_dim, "shift_token_tensor");
  CPLAB_CHECK(axes.rows == layout.rows && axes.seq == layout.local_len(),
              "shift_token_tensor: {} is not a shard [B={}, ℓ={}] on seq dim {}",
              tensor_brief(local), layout.rows, layout.local_len(), seq_dim);
  return do_shift_token_tensor(comm, layout, local, seq_dim, depth, fill);
}

Tensor Implementation::gather_tokens(Comm& comm, const Tensor& local) {
  CPLAB_CHECK(local.dim() >= 1, "gather_tokens: {} has no token dim", tensor_brief(local));
  return do_gather_tokens(comm, local);
}

Tensor Implementation::gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) {
  CPLAB_CHECK(grad_gathered.dim() >= 1 && grad_gathered.size(0) % comm.size() == 0,
              "gather_tokens_backward: gradient {} does not split into {} equal rank slices",
              tensor_brief(grad_gathered), comm.size());
  return do_gather_tokens_backward(comm, grad_gathered);
}

LossOutput Implementation::shifted_cp_loss(Comm& comm, const ShardLayout& layout,
                                           const Tensor& logits, const Tensor& labels,
                                           const Tensor& valid, std::int64_t depth) {
  check_recorded_layout(layout, "shifted_cp_loss");
  const std::int64_t rows = layout.rows, len = layout.local_len();
  CPLAB_CHECK(depth >= 1, "shifted_cp_loss: the depth must be at least 1, not {}", depth);
  check_comm_is_layouts(comm, layout, "shifted_cp_loss");
  CPLAB_CHECK(logits.dim() == 3 && logits.size(0) == rows && logits.size(1) == len,
              "shifted_cp_loss: logits {} must be [B, ℓ, V] = [{}, {}, V]", tensor_brief(logits),
              rows, len);
  CPLAB_CHECK(labels.numel() == rows * len &&
                  (labels.dtype() == DType::i64 || labels.dtype() == DType::i32),
              "shifted_cp_loss: labels {} must be i64 or i32 [B, ℓ] = [{}, {}]",
              tensor_brief(labels), rows, len);
  CPLAB_CHECK(!valid.defined() || valid.numel() == rows * len,
              "shifted_cp_loss: valid {} must hold B·ℓ = {} flags", tensor_brief(valid),
              rows * len);
  return do_shifted_cp_loss(comm, layout, logits, labels, valid, depth);
}

AttentionOutput Implementation::attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                                          const Tensor& k, const Tensor& v,
                                          const Tensor& grad_out) {
  check_recorded_layout(layout, "attention");
  const char* names[] = {"q", "k", "v", "grad_out"};
  const Tensor* inputs[] = {&q, &k, &v, &grad_out};
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = *inputs[i];
    CPLAB_CHECK(t.dtype() == DType::f32 && t.dim() == 3 && t.size(0) == layout.rows &&
                    t.size(1) == layout.local_len() && t.shape() == q.shape(),
                "attention: {} is {}; every input must be f32 [B, ℓ, D] = [{}, {}, D] with one D",
                names[i], tensor_brief(t), layout.rows, layout.local_len());
  }
  return do_attention(comm, layout, q, k, v, grad_out);
}

CpAttentionOutput Implementation::cp_attention(Comm& comm, const ShardLayout& layout,
                                               const std::vector<sim::AttentionSchedule>& rows,
                                               const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& grad_out) {
  check_recorded_layout(layout, "cp_attention");
  const std::int64_t b_rows = layout.rows, len = layout.local_len();
  CPLAB_CHECK(static_cast<std::int64_t>(rows.size()) == b_rows,
              "cp_attention: {} schedules for {} rows", rows.size(), b_rows);
  // Whether the rows' algorithm runs here comes before what it would be run on.
  const std::string why = cp_attention_unsupported(rows.front().algo);
  CPLAB_CHECK(why.empty(), "{}", why);
  check_comm_is_layouts(comm, layout, "cp_attention");
  CPLAB_CHECK(q.dim() == 4 && q.size(0) == b_rows && q.size(1) == len,
              "cp_attention: q is {}; expected [B, ℓ, H, d] = [{}, {}, H, d]", tensor_brief(q),
              b_rows, len);
  const std::int64_t heads = q.size(2), d = q.size(3);
  const DType dtype = q.dtype();
  CPLAB_CHECK(k.dim() == 4 && k.shape() == v.shape() && k.size(0) == b_rows && k.size(1) == len &&
                  k.size(3) == d && k.dtype() == dtype && v.dtype() == dtype,
              "cp_attention: k is {}, v {}; expected {} [B, ℓ, H_kv, d] = [{}, {}, H_kv, {}]",
              tensor_brief(k), tensor_brief(v), dtype_name(dtype), b_rows, len, d);
  CPLAB_CHECK(grad_out.shape() == q.shape() && grad_out.dtype() == dtype,
              "cp_attention: grad_out is {}; expected the shape and dtype of q ({})",
              tensor_brief(grad_out), tensor_brief(q));
  const std::int64_t kv_heads = k.size(2);
  CPLAB_CHECK(kv_heads > 0 && heads % kv_heads == 0,
              "cp_attention: {} query heads over {} KV heads (GQA needs H % H_kv = 0)", heads,
              kv_heads);
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const sim::AttentionSchedule& s = rows[b];
    CPLAB_CHECK(
        s.cp == comm.size() && s.padded_len == layout.padded_len && s.algo == rows.front().algo,
        "cp_attention: row {}'s schedule ({} at C = {}, L = {}) does not fit the layout "
        "(C = {}, L = {}) or the other rows ({})",
        b, sim::algo_name(s.algo), s.cp, s.padded_len, comm.size(), layout.padded_len,
        sim::algo_name(rows.front().algo));
    CPLAB_CHECK(s.shape.heads == heads && s.shape.kv_heads == kv_heads,
                "cp_attention: row {}'s schedule is for {} / {} heads, the tensors have {} / {}", b,
                s.shape.heads, s.shape.kv_heads, heads, kv_heads);
  }
  return do_cp_attention(comm, layout, rows, q, k, v, grad_out);
}

Tensor Implementation::ulysses_all_to_all(Comm& comm, const ShardLayout& layout,
                                          const Tensor& local, const UlyssesHeads& heads,
                                          HeadKind kind) {
  check_ulysses_group(ulysses_unsupported(), comm, layout, heads, "ulysses_all_to_all");
  CPLAB_CHECK(local.dim() == 4 && local.size(0) == layout.rows &&
                  local.size(1) == layout.local_len() && local.size(2) == heads.of(kind),
              "ulysses_all_to_all: the local tensor is {}; expected [B, ℓ, H, d] = [{}, {}, {}, d]",
              tensor_brief(local), layout.rows, layout.local_len(), heads.of(kind));
  return do_ulysses_all_to_all(comm, layout, local, heads, kind);
}

Tensor Implementation::ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                                  const Tensor& gathered, const UlyssesHeads& heads,
                                                  HeadKind kind) {
  check_ulysses_group(ulysses_unsupported(), comm, layout, heads, "ulysses_all_to_all_inverse");
  const std::int64_t n = heads_per_rank(heads, kind, comm.size());
  CPLAB_CHECK(gathered.dim() == 4 && gathered.size(0) == layout.rows &&
                  gathered.size(1) == layout.padded_len && gathered.size(2) == n,
              "ulysses_all_to_all_inverse: the tensor is {}; expected [B, L, n, d] = [{}, {}, {}, "
              "d]",
              tensor_brief(gathered), layout.rows, layout.padded_len, n);
  return do_ulysses_all_to_all_inverse(comm, layout, gathered, heads, kind);
}

// ---- The hooks of the verbs an implementation may go without: reached only when it says it has
// the verb, so reaching one means it forgot to override it.

Tensor Implementation::do_shift_token_tensor(Comm& /*comm*/, const ShardLayout& /*layout*/,
                                             const Tensor& /*local*/, std::int64_t /*seq_dim*/,
                                             std::int64_t /*depth*/, double /*fill*/) {
  CPLAB_FAIL(
      "{} has shift_token_tensor (its shift_unsupported() is empty) but overrides no "
      "do_shift_token_tensor",
      name());
}

CpAttentionOutput Implementation::do_cp_attention(Comm& /*comm*/, const ShardLayout& /*layout*/,
                                                  const std::vector<sim::AttentionSchedule>& rows,
                                                  const Tensor& /*q*/, const Tensor& /*k*/,
                                                  const Tensor& /*v*/, const Tensor& /*grad_out*/) {
  CPLAB_FAIL(
      "{} runs CP attention by schedule ({}: its cp_attention_unsupported() is empty) but "
      "overrides no do_cp_attention",
      name(), sim::algo_name(rows.front().algo));
}

Tensor Implementation::do_ulysses_all_to_all(Comm& /*comm*/, const ShardLayout& /*layout*/,
                                             const Tensor& /*local*/, const UlyssesHeads& /*heads*/,
                                             HeadKind /*kind*/) {
  CPLAB_FAIL(
      "{} has the Ulysses head all-to-all (its ulysses_unsupported() is empty) but "
      "overrides no do_ulysses_all_to_all",
      name());
}

Tensor Implementation::do_ulysses_all_to_all_inverse(Comm& /*comm*/, const ShardLayout& /*layout*/,
                                                     const Tensor& /*gathered*/,
                                                     const UlyssesHeads& /*heads*/,
                                                     HeadKind /*kind*/) {
  CPLAB_FAIL(
      "{} has the Ulysses head all-to-all (its ulysses_unsupported() is empty) but "
      "overrides no do_ulysses_all_to_all_inverse",
      name());
}

}  // namespace cplab
