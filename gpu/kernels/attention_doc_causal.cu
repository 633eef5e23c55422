#include <cuda_runtime.h>

#include <cmath>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/token_math.hpp"
#include "gpu/kernels/attention_doc_causal.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 128;

// Row-major offset of gathered key j of row b: blocks [C][B][ℓ].
__device__ __forceinline__ std::int64_t key_token(const DocCausalAttention& a, std::int64_t b,
                                                  std::int64_t j) {
  return token_offset(b, j, a.cp * a.local, a.local, a.rows);
}

__device__ __forceinline__ bool visible(const DocCausalAttention& a, std::int64_t b, std::int64_t i,
                                        std::int64_t j) {
  const std::int64_t key = key_token(a, b, j);
  if (a.key_window != nullptr) {
    const std::int64_t* w = a.key_window + 2 * (b * a.local + i);
    return a.key_real[key] != 0 && a.key_slot[j] >= w[0] && a.key_slot[j] < w[1];
  }
  return a.key_real[key] != 0 && a.key_doc[key] == a.query_doc[b * a.local + i] &&
         a.key_slot[j] <= a.query_slot[i];
}

__device__ __forceinline__ float dot(const float* x, const float* y, std::int64_t n) {
  float s = 0.0f;
  for (std::int64_t d = 0; d < n; ++d) s += x[d] * y[d];
  return s;
}

__global__ void attention_forward_kernel(DocCausalAttention a, float scale, float* out,
                                         float* lse) {
  const std::int64_t keys = a.cp * a.local;
  for (std::int64_t qi = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       qi < a.rows * a.local; qi += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = qi / a.local, i = qi - b * a.local;
    const float* q = a.q + qi * a.head;
    float* o = out + qi * a.head;
    float m = -INFINITY, s = 0.0f;
    if (a.query_real[qi] != 0) {
      for (std::int64_t j = 0; j < keys; ++j) {
        if (!visible(a, b, i, j)) continue;
        const float x = dot(q, a.k + key_token(a, b, j) * a.head, a.head) * scale;
        if (x > m) {
          s = s * expf(m - x) + 1.0f;
          m = x;
        } else {
          s += expf(x - m);
        }
      }
    }
    float acc[kAttentionMaxHead];
    for (std::int64_t d = 0; d < a.head; ++d) acc[d] = 0.0f;
    const float l = m == -INFINITY ? -INFINITY : m + logf(s);
    if (l != -INFINITY) {
      for (std::int64_t j = 0; j < keys; ++j) {
        if (!visible(a, b, i, j)) continue;
        const std::int64_t key = key_token(a, b, j) * a.head;
        const float p = expf(dot(q, a.k + key, a.head) * scale - l);
        for (std::int64_t d = 0; d < a.head; ++d) acc[d] += p * a.v[key + d];
      }
    }
    for (std::int64_t d = 0; d < a.head; ++d) o[d] = acc[d];
    lse[qi] = l;
  }
}

__global__ void attention_backward_kernel(DocCausalAttention a, float scale, const float* out,
                                          const float* lse, const float* grad_out, float* grad_q,
                                          float* grad_k, float* grad_v) {
  const std::int64_t keys = a.cp * a.local;
  for (std::int64_t qi = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       qi < a.rows * a.local; qi += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = qi / a.local, i = qi - b * a.local;
    const float* q = a.q + qi * a.head;
    const float* dout = grad_out + qi * a.head;
    float acc[kAttentionMaxHead];
    for (std::int64_t d = 0; d < a.head; ++d) acc[d] = 0.0f;
    const float l = lse[qi];
    if (l != -INFINITY) {
      const float delta = dot(dout, out + qi * a.head, a.head);  // Σ_d dO·O = Σ_j p_j dP_j
      for (std::int64_t j = 0; j < keys; ++j) {
        if (!visible(a, b, i, j)) continue;
        const std::int64_t key = key_token(a, b, j) * a.head;
        const float p = expf(dot(q, a.k + key, a.head) * scale - l);
        const float ds = p * (dot(dout, a.v + key, a.head) - delta);
        for (std::int64_t d = 0; d < a.head; ++d) {
          acc[d] += ds * a.k[key + d] * scale;
          atomicAdd(grad_k + key + d, ds * q[d] * scale);
          atomicAdd(grad_v + key + d, p * dout[d]);
        }
      }
    }
    for (std::int64_t d = 0; d < a.head; ++d) grad_q[qi * a.head + d] = acc[d];
  }
}

void check(const DocCausalAttention& a, const char* what) {
  CPLAB_LAUNCH_CHECK(a.rows >= 0 && a.local >= 0 && a.cp >= 1, what, ": rows=", a.rows,
                     " local=", a.local, " cp=", a.cp);
  CPLAB_LAUNCH_CHECK(a.head >= 1 && a.head <= kAttentionMaxHead, what, ": head dim D=", a.head,
                     " outside [1, ", kAttentionMaxHead, "]");
  CPLAB_LAUNCH_CHECK(
      a.rows * a.local == 0 || (a.q && a.k && a.v && a.query_slot && a.query_doc && a.query_real &&
                                a.key_slot && a.key_doc && a.key_real),
      what, ": a required device array is null");
}

unsigned blocks_for(const DocCausalAttention& a) {
  return static_cast<unsigned>(grid_blocks(a.rows * a.local, kThreads, 32768));
}

}  // namespace

void attention_forward(const DocCausalAttention& a, float* out, float* lse, Stream stream) {
  check(a, "attention_forward");
  if (a.rows * a.local == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.head));
  attention_forward_kernel<<<blocks_for(a), kThreads, 0, stream>>>(a, scale, out, lse);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void attention_backward(const DocCausalAttention& a, const float* out, const float* lse,
                        const float* grad_out, float* grad_q, float* grad_k, float* grad_v,
                        Stream stream) {
  check(a, "attention_backward");
  if (a.rows * a.local == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.head));
  attention_backward_kernel<<<blocks_for(a), kThreads, 0, stream>>>(a, scale, out, lse, grad_out,
                                                                    grad_q, grad_k, grad_v);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
