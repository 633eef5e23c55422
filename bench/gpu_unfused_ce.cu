#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "bench/gpu_unfused_ce.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::bench {
namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __bfloat162float(v);
}

// Block-wide reduction of one float per thread (max or sum); every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) v = kMax ? fmaxf(v, shared[w]) : v + shared[w];
  __syncthreads();
  return v;
}

// Pass 1, one block per row: max, then Σ exp(z - max) (the row read twice, as log_softmax's
// forward does), giving log-sum-exp and the row's loss.
template <typename T>
__global__ void row_logsumexp_kernel(const T* logits, std::int64_t vocab,
                                     const std::int64_t* targets, float* lse, float* row_loss) {
  __shared__ float shared[kThreads / 32];
  const T* z = logits + static_cast<std::int64_t>(blockIdx.x) * vocab;
  float m = -INFINITY;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kThreads) m = fmaxf(m, to_float(z[v]));
  m = block_reduce<true>(m, shared);
  float s = 0.0f;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kThreads) s += __expf(to_float(z[v]) - m);
  s = block_reduce<false>(s, shared);
  if (threadIdx.x == 0) {
    const float l = m + logf(s);
    const std::int64_t y = targets[blockIdx.x];
    lse[blockIdx.x] = l;
    row_loss[blockIdx.x] = y < 0 ? 0.0f : l - to_float(z[y]);
  }
}

// Pass 2, one thread per element: the gradient, written once.
template <typename T>
__global__ void softmax_grad_kernel(const T* logits, std::int64_t rows, std::int64_t vocab,
                                    const std::int64_t* targets, const float* lse, float scale,
                                    float* grad) {
  const std::int64_t n = rows * vocab;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / vocab, v = i - row * vocab;
    const std::int64_t y = targets[row];
    grad[i] =
        y < 0 ? 0.0f : (__expf(to_float(logits[i]) - lse[row]) - (v == y ? 1.0f : 0.0f)) * scale;
  }
}

template <typename T>
void launch(const gpu::FusedCe& args, float* lse, gpu::Stream stream) {
  const T* logits = static_cast<const T*>(args.logits);
  row_logsumexp_kernel<T><<<static_cast<unsigned>(args.rows), kThreads, 0, stream>>>(
      logits, args.vocab, args.targets, lse, args.row_loss);
  CPLAB_CUDA_CHECK(cudaGetLastError());
  const std::int64_t blocks = std::min<std::int64_t>(
      (args.rows * args.vocab + kThreads - 1) / kThreads, std::int64_t{1} << 16);
  softmax_grad_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      logits, args.rows, args.vocab, args.targets, lse, args.scale, static_cast<float*>(args.grad));
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void unfused_shifted_ce(const gpu::FusedCe& args, float* lse, gpu::Stream stream) {
  CPLAB_LAUNCH_CHECK(args.grad_elem == gpu::LossElem::f32,
                     "unfused_shifted_ce: the gradient must be f32");
  CPLAB_LAUNCH_CHECK(args.rows > 0 && args.rows < (std::int64_t{1} << 31) && args.vocab > 0,
                     "unfused_shifted_ce: rows ", args.rows, " and vocab ", args.vocab,
                     " must be positive (rows < 2^31)");
  if (args.logits_elem == gpu::LossElem::f32)
    launch<float>(args, lse, stream);
  else
    launch<__nv_bfloat16>(args, lse, stream);
}

}  // namespace cplab::bench
