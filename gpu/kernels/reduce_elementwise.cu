#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/kernels/launch_check.hpp"
#include "gpu/kernels/reduce_elementwise.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;

// Half types combine in fp32 and round once, as NCCL does for each step of a reduction.
template <typename T>
__device__ __forceinline__ float widen(T v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return __half2float(v);
}
template <typename T>
__device__ __forceinline__ T narrow(float v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return __float2half_rn(v);
}

template <typename T, ReduceKind Op>
__device__ __forceinline__ T combine(T a, T b) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>) {
    const float x = widen(a), y = widen(b);
    return narrow<T>(Op == ReduceKind::sum ? x + y : fmaxf(x, y));
  } else if constexpr (Op == ReduceKind::sum) {
    return static_cast<T>(a + b);
  } else {
    return a > b ? a : b;
  }
}

template <typename T, ReduceKind Op>
__global__ void reduce_into_kernel(T* acc, const T* in, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    acc[i] = combine<T, Op>(acc[i], in[i]);
  }
}

template <typename T>
void launch(void* acc, const void* in, std::int64_t count, ReduceKind op, Stream stream) {
  const auto blocks = static_cast<unsigned>(grid_blocks(count, kThreads, 32768));
  if (op == ReduceKind::sum) {
    reduce_into_kernel<T, ReduceKind::sum>
        <<<blocks, kThreads, 0, stream>>>(static_cast<T*>(acc), static_cast<const T*>(in), count);
  } else {
    reduce_into_kernel<T, ReduceKind::max>
        <<<blocks, kThreads, 0, stream>>>(static_cast<T*>(acc), static_cast<const T*>(in), count);
  }
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void reduce_into(void* acc, const void* in, std::int64_t count, ReduceElem elem, ReduceKind op,
                 Stream stream) {
  CPLAB_LAUNCH_CHECK(count >= 0, "reduce_into: negative count ", count);
  if (count == 0) return;
  CPLAB_LAUNCH_CHECK(acc != nullptr && in != nullptr, "reduce_into: null buffer for ", count,
                     " elements");
  switch (elem) {
    case ReduceElem::f32:
      return launch<float>(acc, in, count, op, stream);
    case ReduceElem::bf16:
      return launch<__nv_bfloat16>(acc, in, count, op, stream);
    case ReduceElem::f16:
      return launch<__half>(acc, in, count, op, stream);
    case ReduceElem::i64:
      return launch<long long>(acc, in, count, op, stream);
    case ReduceElem::i32:
      return launch<int>(acc, in, count, op, stream);
    case ReduceElem::u8:
      return launch<unsigned char>(acc, in, count, op, stream);
  }
  CPLAB_LAUNCH_CHECK(false, "reduce_into: unknown element type ", static_cast<int>(elem));
}

}  // namespace cplab::gpu
