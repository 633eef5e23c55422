#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/pad_anchors.hpp"
#include "gpu/kernels/launch_check.hpp"
#include "gpu/kernels/pad_positions.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void continue_positions_kernel(ContinuePositions a) {
  const std::int64_t total = a.outer * a.rows * a.local * a.inner;
  const T* src = static_cast<const T*>(a.src);
  T* dst = static_cast<T*>(a.dst);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t e = i % a.inner;
    const std::int64_t k = (i / a.inner) % a.local;
    const std::int64_t slice = i / (a.inner * a.local);  // o·rows + b
    const std::int64_t anchor = a.anchor[k];
    if (anchor == kNotPadded) continue;
    T value = static_cast<T>(a.delta[k]);
    if (anchor >= 0) {
      const std::int64_t o = slice / a.rows, b = slice - o * a.rows;
      const std::int64_t src_slice = o * a.src_rows + (a.src_rows == 1 ? 0 : a.src_row_begin + b);
      value += src[(src_slice * a.src_tokens + anchor) * a.inner + e];
    }
    dst[i] = value;
  }
}

}  // namespace

void continue_positions(const ContinuePositions& a, Stream stream) {
  CPLAB_LAUNCH_CHECK(
      a.outer >= 0 && a.rows >= 0 && a.local >= 0 && a.inner >= 0 && a.src_tokens >= 0,
      "continue_positions: negative sizes outer=", a.outer, " rows=", a.rows, " local=", a.local,
      " inner=", a.inner);
  CPLAB_LAUNCH_CHECK(
      a.src_rows == 1 || (a.src_row_begin >= 0 && a.src_row_begin + a.rows <= a.src_rows),
      "continue_positions: rows [", a.src_row_begin, ", ", a.src_row_begin + a.rows,
      ") of a source with ", a.src_rows, " rows");
  const std::int64_t total = a.outer * a.rows * a.local * a.inner;
  if (total == 0) return;
  CPLAB_LAUNCH_CHECK(a.dst && a.src && a.anchor && a.delta,
                     "continue_positions: a required device array is null");
  const auto blocks = static_cast<unsigned>(grid_blocks(total, kThreads, 32768));
  switch (a.elem) {
    case PositionElem::i64:
      continue_positions_kernel<long long><<<blocks, kThreads, 0, stream>>>(a);
      break;
    case PositionElem::i32:
      continue_positions_kernel<int><<<blocks, kThreads, 0, stream>>>(a);
      break;
    case PositionElem::f32:
      continue_positions_kernel<float><<<blocks, kThreads, 0, stream>>>(a);
      break;
  }
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
