#include "gpu/impl/cp_attention_run.hpp"

#include "core/error.hpp"
#include "gpu/attention/lse_merge.hpp"
#include "gpu/impl/token_ops.hpp"

namespace cplab::gpu {

AttnElem attn_elem(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return AttnElem::f32;
    case DType::bf16:
      return AttnElem::bf16;
    case DType::f16:
      return AttnElem::f16;
    default:
      CPLAB_FAIL("gpu cp_attention: dtype {} is not an attention dtype; supported: f32, bf16, f16",
                 dtype_name(dtype));
  }
}

namespace {

std::size_t f32_bytes(std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); }

}  // namespace

CpAttentionRun::CpAttentionRun(const Tensor& q, std::int64_t kv_heads, const Tensor& grad_out,
                               const std::vector<sim::AttentionSchedule>& rows, Stream stream)
    : stream_(stream),
      dtype_(q.dtype()),
      q_shape_(q.shape()),
      kv_shape_{q.size(0), q.size(1), kv_heads, q.size(3)},
      tokens_(q.size(0) * q.size(1)),
      heads_(q.size(2)),
      kv_heads_(kv_heads),
      head_dim_(q.size(3)),
      kv_elems_(tokens_ * kv_heads * head_dim_),
      q_(upload_tensor(q, stream)),
      grad_out_(upload_tensor(grad_out, stream)),
      facts_(upload_vector(token_facts(rows), stream)),
      rule_(rows.empty() ? sim::MaskRule{} : rows.front().mask.rule()),
      out_(f32_bytes(q.numel())),
      lse_(f32_bytes(tokens_ * heads_)),
      out_rounded_(q.nbytes()),
      delta_(f32_bytes(tokens_ * heads_)),
      grad_q_(f32_bytes(q.numel())) {
  attn_elem(dtype_);
  reset_running_output(tokens_, heads_, head_dim_, out_.as<float>(), lse_.as<float>(), stream_);
  grad_q_.fill_bytes(0, stream_);
}

CpAttentionRun::Step CpAttentionRun::upload(StepLaunch plan) const {
  Step s;
  s.queries = upload_vector(plan.queries, stream_);
  s.keys = upload_vector(plan.keys, stream_);
  s.blocks = upload_vector(plan.blocks, stream_);
  s.query_tiles = upload_vector(plan.query_tiles, stream_);
  s.key_tiles = upload_vector(plan.key_tiles, stream_);
  s.merge_tokens = upload_vector(plan.merge_tokens, stream_);
  s.merge_offsets = upload_vector(plan.merge_offsets, stream_);
  s.merge_rows = upload_vector(plan.merge_rows, stream_);
  s.plan = std::move(plan);
  return s;
}

BlockAttention CpAttentionRun::launch(const Step& step, const DeviceBuffer& k,
                                      const DeviceBuffer& v) const {
  return {.elem = attn_elem(dtype_),
          .heads = heads_,
          .kv_heads = kv_heads_,
          .head_dim = head_dim_,
          .q = q_.get(),
          .k = k.get(),
          .v = v.get(),
          .queries = step.queries.as<AttnPosition>(),
          .keys = step.keys.as<AttnPosition>(),
          .blocks = step.blocks.as<AttnBlock>(),
          .block_count = static_cast<std::int64_t>(step.plan.blocks.size()),
          .facts = facts_.as<sim::TokenFacts>(),
          .rule = rule_};
}

void CpAttentionRun::forward(const Step& step, const DeviceBuffer& k, const DeviceBuffer& v) {
  if (step.plan.blocks.empty()) return;
  const std::int64_t rows = step.plan.out_rows * heads_;
  DeviceBuffer block_out(static_cast<std::size_t>(rows * head_dim_) * dtype_size(dtype_)),
      block_lse(f32_bytes(rows));
  block_attention_forward(launch(step, k, v), step.query_tiles.as<AttnTile>(),
                          static_cast<std::int64_t>(step.plan.query_tiles.size()), block_out.get(),
                          block_lse.as<float>(), stream_);
  const LseMerge m{.elem = attn_elem(dtype_),
                   .heads = heads_,
                   .head_dim = head_dim_,
                   .targets = static_cast<std::int64_t>(step.plan.merge_tokens.size()),
                   .tokens = step.merge_tokens.as<std::int64_t>(),
                   .offsets = step.merge_offsets.as<std::int64_t>(),
                   .rows = step.merge_rows.as<std::int64_t>(),
                   .block_out = block_out.get(),
                   .block_lse = block_lse.as<float>()};
  merge_block_outputs(m, out_.as<float>(), lse_.as<float>(), stream_);
  // The scratch is freed when this returns: the merge must have read it by then.
  synchronize(stream_);
}

void CpAttentionRun::finish_forward() {
  cast_from_f32(out_.as<float>(), out_rounded_.get(), attn_elem(dtype_), shape_numel(q_shape_),
                stream_);
  attention_delta(attn_elem(dtype_), tokens_, heads_, head_dim_, out_rounded_.get(),
                  grad_out_.get(), delta_.as<float>(), stream_);
}

void CpAttentionRun::backward(const Step& step, const DeviceBuffer& k, const DeviceBuffer& v,
                              DeviceBuffer& dk, DeviceBuffer& dv) {
  if (step.plan.blocks.empty()) return;
  const BlockAttention a = launch(step, k, v);
  block_attention_backward_dq(
      a, step.query_tiles.as<AttnTile>(), static_cast<std::int64_t>(step.plan.query_tiles.size()),
      grad_out_.get(), lse_.as<float>(), delta_.as<float>(), grad_q_.as<float>(), stream_);
  block_attention_backward_dkv(a, step.key_tiles.as<AttnTile>(),
                               static_cast<std::int64_t>(step.plan.key_tiles.size()),
                               grad_out_.get(), lse_.as<float>(), delta_.as<float>(),
                               dk.as<float>(), dv.as<float>(), stream_);
}

DeviceBuffer CpAttentionRun::rounded(const DeviceBuffer& f32, std::int64_t n) const {
  CPLAB_CHECK(f32.bytes() >= f32_bytes(n),
              "gpu cp_attention: {} f32 values from a buffer of {} bytes", n, f32.bytes());
  DeviceBuffer out(static_cast<std::size_t>(n) * dtype_size(dtype_));
  cast_from_f32(f32.as<float>(), out.get(), attn_elem(dtype_), n, stream_);
  return out;
}

Tensor CpAttentionRun::download_cast(const DeviceBuffer& f32, std::int64_t n, Shape shape) const {
  return download_tensor(rounded(f32, n), dtype_, std::move(shape), stream_);
}

Tensor CpAttentionRun::kv_grad_rounded(const DeviceBuffer& grad) const {
  CPLAB_CHECK(grad.bytes() == static_cast<std::size_t>(kv_elems_) * dtype_size(dtype_),
              "gpu cp_attention: a K/V gradient of {} bytes; this rank's keys need {}",
              grad.bytes(), static_cast<std::size_t>(kv_elems_) * dtype_size(dtype_));
  return download_tensor(grad, dtype_, kv_shape_, stream_);
}

Tensor CpAttentionRun::out() const {
  return download_tensor(out_rounded_, dtype_, q_shape_, stream_);
}

Tensor CpAttentionRun::lse() const {
  return download_tensor(lse_, DType::f32, {q_shape_[0], q_shape_[1], q_shape_[2]}, stream_);
}

Tensor CpAttentionRun::grad_q() const {
  return download_cast(grad_q_, shape_numel(q_shape_), q_shape_);
}

Tensor CpAttentionRun::kv_grad(const DeviceBuffer& acc) const {
  CPLAB_CHECK(acc.bytes() == f32_bytes(kv_elems_),
              "gpu cp_attention: a K/V gradient of {} bytes; this rank's keys need {}", acc.bytes(),
              f32_bytes(kv_elems_));
  return download_cast(acc, kv_elems_, kv_shape_);
}

}  // namespace cplab::gpu
