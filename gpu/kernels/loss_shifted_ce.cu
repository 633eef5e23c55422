#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/shifted_target.hpp"
#include "gpu/kernels/launch_check.hpp"
#include "gpu/kernels/loss_shifted_ce.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 32768;

// ---- helpers ------------------------------------------------------------------------------
template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __bfloat162float(v);
}
template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __float2bfloat16_rn(v);
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// N consecutive elements from a pointer aligned to N·sizeof(T) (N = 1: a scalar load).
template <typename T, int N>
__device__ __forceinline__ void load(const T* p, float (&out)[N]) {
  const Pack<T, N> pack = *reinterpret_cast<const Pack<T, N>*>(p);
#pragma unroll
  for (int j = 0; j < N; ++j) out[j] = to_float(pack.v[j]);
}
template <typename T, int N>
__device__ __forceinline__ void store(T* p, const float (&in)[N]) {
  // Pieces of at most 16 bytes: 8 f32 of a bf16 row go out as two 16-byte stores.
  constexpr int M = N * sizeof(T) > 16 ? 16 / static_cast<int>(sizeof(T)) : N;
#pragma unroll
  for (int j = 0; j < N; j += M) {
    Pack<T, M> pack;
#pragma unroll
    for (int q = 0; q < M; ++q) pack.v[q] = from_float<T>(in[j + q]);
    *reinterpret_cast<Pack<T, M>*>(p + j) = pack;
  }
}

// Online log-sum-exp state: running max m and Σ exp(x - m). -inf max means "nothing seen".
struct Lse {
  float m, s;
};
__device__ __forceinline__ void lse_add(Lse& a, float x) {
  if (x > a.m) {
    a.s = a.s * expf(a.m - x) + 1.0f;
    a.m = x;
  } else if (a.m != -INFINITY) {
    a.s += expf(x - a.m);  // NaN logits fall here and poison the sum, as they should
  } else if (isnan(x)) {
    // A NaN before any other value: a NaN max keeps the state from reading as "nothing seen", so
    // lse_merge and later lse_add calls carry the NaN into the row's loss and gradient.
    a = {x, x};
  }
}
__device__ __forceinline__ Lse lse_merge(Lse a, Lse b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

// Every thread gets log Σ exp over the block's states.
__device__ float block_lse(Lse st) {
  __shared__ Lse warp_state[kThreads / 32];
  __shared__ float result;
  for (int d = 16; d > 0; d >>= 1) {
    const Lse other{__shfl_xor_sync(0xffffffffu, st.m, d), __shfl_xor_sync(0xffffffffu, st.s, d)};
    st = lse_merge(st, other);
  }
  if (threadIdx.x % 32 == 0) warp_state[threadIdx.x / 32] = st;
  __syncthreads();
  if (threadIdx.x == 0) {
    Lse all = warp_state[0];
    for (int w = 1; w < kThreads / 32; ++w) all = lse_merge(all, warp_state[w]);
    result = all.m + logf(all.s);
  }
  __syncthreads();
  return result;
}

// ---- kernels ------------------------------------------------------------------------------
__global__ void pack_target_labels_kernel(const std::int64_t* labels, const std::int32_t* doc_ids,
                                          std::int64_t rows, std::int64_t local,
                                          const std::int64_t* send_k, std::int64_t cp,
                                          std::int64_t width, std::int64_t* out) {
  const std::int64_t total = cp * rows * width;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = e / (rows * width);
    const std::int64_t b = (e / width) % rows;
    const std::int64_t k = send_k[p * width + e % width];
    out[2 * e] = k >= 0 ? labels[b * local + k] : kIgnoreLabel;
    out[2 * e + 1] = k >= 0 ? doc_ids[b * local + k] : 0;
  }
}

template <typename Map>
__global__ void shifted_targets_kernel(Map map, ShiftedTargets a, std::int64_t local) {
  const std::int64_t total = a.rows * local;
  const ReceivedLabels in{a.received, a.rows, a.width};
  // Whole blocks step together so that __syncthreads_count sees every thread.
  for (std::int64_t base = blockIdx.x * static_cast<std::int64_t>(blockDim.x); base < total;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = base + threadIdx.x;
    bool counted = false;
    if (i < total) {
      const std::int64_t b = i / local, k = i - b * local;
      const Target t =
          shifted_target(map, a.rank, b, k, a.map.padded_len, a.depth, a.packed, a.valid[i] != 0,
                         a.labels + b * local, a.doc_ids + b * local, a.recv_index[k], in);
      counted = t.contributes && t.label >= 0 && t.label < a.vocab;
      if (t.contributes && !counted && a.bad != nullptr)
        atomicMin(reinterpret_cast<long long*>(a.bad), i);
      a.targets[i] = counted ? t.label : -1;
    }
    const int n = __syncthreads_count(counted);
    if (threadIdx.x == 0 && n > 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(a.count), static_cast<unsigned long long>(n));
  }
}

template <typename TIn, typename TOut, int N>
__global__ void fused_shifted_ce_kernel(FusedCe a) {
  const auto* logits = static_cast<const TIn*>(a.logits);
  auto* grad = static_cast<TOut*>(a.grad);
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * N;
  for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const std::int64_t y = a.targets[row];
    const TIn* x = logits + row * a.vocab;
    TOut* g = grad + row * a.vocab;
    if (y < 0) {  // uniform over the block: no barrier below is skipped by some threads only
      const float zero[N] = {};
      for (std::int64_t v = threadIdx.x * N; v < a.vocab; v += stride) store<TOut, N>(g + v, zero);
      if (threadIdx.x == 0) a.row_loss[row] = 0.0f;
      continue;
    }
    Lse st{-INFINITY, 0.0f};
    for (std::int64_t v = threadIdx.x * N; v < a.vocab; v += stride) {
      float vals[N];
      load<TIn, N>(x + v, vals);
#pragma unroll
      for (int j = 0; j < N; ++j) lse_add(st, vals[j]);
    }
    const float lse = block_lse(st);
    if (threadIdx.x == 0) a.row_loss[row] = lse - to_float(x[y]);
    for (std::int64_t v = threadIdx.x * N; v < a.vocab; v += stride) {
      float vals[N];
      load<TIn, N>(x + v, vals);
#pragma unroll
      for (int j = 0; j < N; ++j)
        vals[j] = (expf(vals[j] - lse) - (v + j == y ? 1.0f : 0.0f)) * a.scale;
      store<TOut, N>(g + v, vals);
    }
  }
}

__global__ void sum_in_order_kernel(const float* values, std::int64_t n, double* out) {
  __shared__ double partial[kThreads];
  double s = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += kThreads) s += values[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

unsigned blocks_for(std::int64_t items, std::int64_t per_block) {
  return static_cast<unsigned>(grid_blocks(items, per_block, kMaxBlocks));
}

template <typename TIn, typename TOut>
void launch_ce(const FusedCe& a, std::int64_t n, Stream stream) {
  const unsigned blocks = blocks_for(a.rows, 1);
  if (n == 1)
    fused_shifted_ce_kernel<TIn, TOut, 1><<<blocks, kThreads, 0, stream>>>(a);
  else if (n == 4)
    fused_shifted_ce_kernel<TIn, TOut, 4><<<blocks, kThreads, 0, stream>>>(a);
  else
    fused_shifted_ce_kernel<TIn, TOut, 8><<<blocks, kThreads, 0, stream>>>(a);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void pack_target_labels(const std::int64_t* labels, const std::int32_t* doc_ids, std::int64_t rows,
                        std::int64_t local_len, const std::int64_t* send_k, std::int64_t cp,
                        std::int64_t width, std::int64_t* out, Stream stream) {
  CPLAB_LAUNCH_CHECK(rows >= 0 && local_len >= 0 && cp >= 1 && width >= 0,
                     "pack_target_labels: bad sizes rows=", rows, " local_len=", local_len,
                     " cp=", cp, " width=", width);
  const std::int64_t total = cp * rows * width;
  if (total == 0) return;
  pack_target_labels_kernel<<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
      labels, doc_ids, rows, local_len, send_k, cp, width, out);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void shifted_targets(const ShiftedTargets& a, Stream stream) {
  validate_map(a.map, "shifted_targets");
  CPLAB_LAUNCH_CHECK(a.rank >= 0 && a.rank < a.map.cp, "shifted_targets: rank ", a.rank,
                     " outside [0, ", a.map.cp, ")");
  CPLAB_LAUNCH_CHECK(a.rows >= 0 && a.vocab >= 1, "shifted_targets: rows=", a.rows,
                     ", vocab V=", a.vocab, " (V must be >= 1)");
  CPLAB_LAUNCH_CHECK(a.depth >= 1, "shifted_targets: depth ", a.depth, " (must be >= 1)");
  const std::int64_t local = a.map.local_len();
  if (a.rows * local == 0) return;
  CPLAB_LAUNCH_CHECK(a.labels && a.doc_ids && a.valid && a.recv_index && a.targets && a.count,
                     "shifted_targets: a required device array is null");
  CPLAB_LAUNCH_CHECK(a.map.cp == 1 || a.width == 0 || a.received != nullptr,
                     "shifted_targets: ", a.width, " received slots per peer but no buffer");
  visit_map(a.map, [&](auto m) {
    shifted_targets_kernel<<<blocks_for(a.rows * local, kThreads), kThreads, 0, stream>>>(m, a,
                                                                                          local);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void fused_shifted_ce(const FusedCe& a, Stream stream) {
  CPLAB_LAUNCH_CHECK(a.rows >= 0 && a.vocab >= 1, "fused_shifted_ce: rows=", a.rows,
                     ", V=", a.vocab, " (V must be >= 1)");
  if (a.rows == 0) return;
  CPLAB_LAUNCH_CHECK(a.logits && a.grad && a.targets && a.row_loss,
                     "fused_shifted_ce: a required device array is null");
  CPLAB_LAUNCH_CHECK(std::isfinite(a.scale), "fused_shifted_ce: gradient scale C/N = ", a.scale,
                     " is not finite");
  const std::int64_t in_bytes = a.logits_elem == LossElem::f32 ? 4 : 2;
  const std::int64_t n =
      loss_vector_elems(reinterpret_cast<std::uintptr_t>(a.logits),
                        reinterpret_cast<std::uintptr_t>(a.grad), a.vocab, in_bytes);
  const bool in32 = a.logits_elem == LossElem::f32, out32 = a.grad_elem == LossElem::f32;
  if (in32 && out32)
    launch_ce<float, float>(a, n, stream);
  else if (in32)
    launch_ce<float, __nv_bfloat16>(a, n, stream);
  else if (out32)
    launch_ce<__nv_bfloat16, float>(a, n, stream);
  else
    launch_ce<__nv_bfloat16, __nv_bfloat16>(a, n, stream);
}

void sum_in_order(const float* values, std::int64_t n, double* out, Stream stream) {
  CPLAB_LAUNCH_CHECK(n >= 0 && out != nullptr && (n == 0 || values != nullptr),
                     "sum_in_order: n=", n, " with a null buffer");
  sum_in_order_kernel<<<1, kThreads, 0, stream>>>(values, n, out);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
