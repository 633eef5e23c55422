#pragma once
// One rank's CP attention by schedule on the device (SPEC §13), the part every algorithm shares:
// its queries and grad_out uploaded once, the facts table once, the f32 running output and LSE,
// the steps' plans uploaded once and replayed by the backward, and the launches of
// gpu/attention/. The algorithms (gpu_cp_attention.cpp) say only which K/V the rank holds at each
// step and how it got there.
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "gpu/attention/block_attention.hpp"
#include "gpu/device.hpp"
#include "gpu/host/attention_plan.hpp"

namespace cplab::gpu {

AttnElem attn_elem(DType dtype);  // f32, bf16 or f16; throws for the others

class CpAttentionRun {
 public:
  // q, grad_out [B, ℓ, H, d] of this rank; the rows' schedules give the facts table.
  CpAttentionRun(const Tensor& q, std::int64_t kv_heads, const Tensor& grad_out,
                 const std::vector<sim::AttentionSchedule>& rows, Stream stream);

  // A step's plan on the device; kept by the caller so the backward replays it.
  struct Step {
    StepLaunch plan;
    DeviceBuffer queries, keys, blocks, query_tiles, key_tiles, merge_tokens, merge_offsets,
        merge_rows;
  };
  Step upload(StepLaunch plan) const;

  // The step's blocks over the held k, v ([held tokens][H_kv][d], input dtype), merged into the
  // running output.
  void forward(const Step& step, const DeviceBuffer& k, const DeviceBuffer& v);
  // After the last forward step: the output rounded to the input dtype and the backward's delta.
  void finish_forward();
  // The step's blocks backward: dQ accumulated here, dK and dV into the held accumulators
  // ([held tokens][H_kv][d] f32).
  void backward(const Step& step, const DeviceBuffer& k, const DeviceBuffer& v, DeviceBuffer& dk,
                DeviceBuffer& dv);

  Tensor out() const;     // [B, ℓ, H, d] input dtype
  Tensor lse() const;     // [B, ℓ, H] f32
  Tensor grad_q() const;  // [B, ℓ, H, d] input dtype
  // A [B, ℓ, H_kv, d] f32 accumulator of this rank's keys, rounded to the input dtype.
  Tensor kv_grad(const DeviceBuffer& acc) const;
  // n f32 values rounded to the input dtype, on the device (what a reduce in that dtype sends).
  DeviceBuffer rounded(const DeviceBuffer& f32, std::int64_t n) const;
  // This rank's K/V gradient already in the input dtype (a reduce-scatter's result).
  Tensor kv_grad_rounded(const DeviceBuffer& grad) const;
  DType dtype() const { return dtype_; }

  std::int64_t tokens() const { return tokens_; }      // B·ℓ
  std::int64_t kv_elems() const { return kv_elems_; }  // B·ℓ·H_kv·d

 private:
  BlockAttention launch(const Step& step, const DeviceBuffer& k, const DeviceBuffer& v) const;
  Tensor download_cast(const DeviceBuffer& f32, std::int64_t n, Shape shape) const;

  Stream stream_;
  DType dtype_;
  Shape q_shape_, kv_shape_;
  std::int64_t tokens_, heads_, kv_heads_, head_dim_, kv_elems_;
  DeviceBuffer q_, grad_out_, facts_;
  sim::MaskRule rule_;  // the rows' mask (token_facts checks that they share one)
  DeviceBuffer out_, lse_, out_rounded_, delta_, grad_q_;
};

}  // namespace cplab::gpu
