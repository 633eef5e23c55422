#include <cuda_runtime.h>

#include <cmath>

#include "gpu/attention/elements.cuh"
#include "gpu/attention/lse_merge.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 128;

// One thread per (target, head): its contributions in block order, so the result does not depend
// on which thread block ran first.
template <typename T>
__global__ void merge_block_outputs_kernel(LseMerge m, float* out, float* lse) {
  const std::int64_t items = m.targets * m.heads;
  const auto* block_out = static_cast<const T*>(m.block_out);
  for (std::int64_t it = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       it < items; it += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t t = it / m.heads, h = it - t * m.heads;
    const std::int64_t at = m.tokens[t] * m.heads + h;
    float* o = out + at * m.head_dim;
    float l = lse[at];
    for (std::int64_t c = m.offsets[t]; c < m.offsets[t + 1]; ++c) {
      const std::int64_t row = m.rows[c] * m.heads + h;
      const float lb = m.block_lse[row];
      if (lb == -INFINITY) continue;  // the block showed this query nothing
      const T* ob = block_out + row * m.head_dim;
      if (l == -INFINITY) {
        for (std::int64_t e = 0; e < m.head_dim; ++e) o[e] = attn::load(ob + e);
        l = lb;
        continue;
      }
      const float hi = fmaxf(l, lb), lo = fminf(l, lb);
      const float merged = hi + log1pf(expf(lo - hi));            // lo - hi <= 0
      const float wa = expf(l - merged), wb = expf(lb - merged);  // both exponents <= 0
      for (std::int64_t e = 0; e < m.head_dim; ++e) o[e] = o[e] * wa + attn::load(ob + e) * wb;
      l = merged;
    }
    lse[at] = l;
  }
}

__global__ void reset_running_output_kernel(std::int64_t rows, std::int64_t head_dim, float* out,
                                            float* lse) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < rows * head_dim; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = 0.0f;
    if (i % head_dim == 0) lse[i / head_dim] = -INFINITY;
  }
}

template <typename T>
__global__ void cast_from_f32_kernel(const float* src, T* dst, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    attn::store(dst + i, src[i]);
}

unsigned blocks_for(std::int64_t items) {
  return static_cast<unsigned>(grid_blocks(items, kThreads, 32768));
}

}  // namespace

void merge_block_outputs(const LseMerge& m, float* out, float* lse, Stream stream) {
  CPLAB_LAUNCH_CHECK(m.heads >= 1 && m.head_dim >= 1 && m.targets >= 0,
                     "merge_block_outputs: heads=", m.heads, " head_dim=", m.head_dim,
                     " targets=", m.targets);
  if (m.targets == 0) return;
  CPLAB_LAUNCH_CHECK(m.tokens && m.offsets && m.rows && m.block_out && m.block_lse && out && lse,
                     "merge_block_outputs: a required device array is null");
  attn::visit_element(m.elem, "merge_block_outputs", [&](auto element) {
    using T = decltype(element);
    merge_block_outputs_kernel<T>
        <<<blocks_for(m.targets * m.heads), kThreads, 0, stream>>>(m, out, lse);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void reset_running_output(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                          float* out, float* lse, Stream stream) {
  CPLAB_LAUNCH_CHECK(tokens >= 0 && heads >= 1 && head_dim >= 1,
                     "reset_running_output: tokens=", tokens, " heads=", heads,
                     " head_dim=", head_dim);
  const std::int64_t rows = tokens * heads;
  if (rows == 0) return;
  reset_running_output_kernel<<<blocks_for(rows * head_dim), kThreads, 0, stream>>>(rows, head_dim,
                                                                                    out, lse);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void cast_from_f32(const float* src, void* dst, AttnElem elem, std::int64_t n, Stream stream) {
  CPLAB_LAUNCH_CHECK(n >= 0, "cast_from_f32: n=", n);
  if (n == 0) return;
  attn::visit_element(elem, "cast_from_f32", [&](auto element) {
    using T = decltype(element);
    cast_from_f32_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(src, static_cast<T*>(dst), n);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
