#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/kernels/gather_tokens.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void invert_positions_kernel(const std::int64_t* positions, std::int64_t rows,
                                        std::int64_t n, std::int64_t* inverse, std::int64_t m,
                                        std::int64_t* bad) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < rows * n; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / n;
    const std::int64_t c = positions[i];
    if (c == -1) continue;
    const bool claimed = c >= 0 && c < m &&
                         atomicCAS(reinterpret_cast<unsigned long long*>(inverse + row * m + c),
                                   ~0ull, static_cast<unsigned long long>(i - row * n)) == ~0ull;
    if (!claimed && bad != nullptr)
      atomicMin(reinterpret_cast<long long*>(bad), static_cast<long long>(i));
  }
}

}  // namespace

void invert_positions(const std::int64_t* positions, std::int64_t rows, std::int64_t n,
                      std::int64_t* inverse, std::int64_t m, std::int64_t* bad, Stream stream) {
  CPLAB_LAUNCH_CHECK(rows >= 0 && n >= 0 && m >= 0, "invert_positions: negative sizes rows=", rows,
                     " n=", n, " m=", m);
  if (rows * m > 0) {
    CPLAB_LAUNCH_CHECK(inverse != nullptr, "invert_positions: null output of ", rows * m,
                       " entries");
    // All ones is -1 in two's complement: the "no token" marker the kernel claims with atomicCAS.
    CPLAB_CUDA_CHECK(cudaMemsetAsync(
        inverse, 0xff, static_cast<std::size_t>(rows * m) * sizeof(std::int64_t), stream));
  }
  if (rows * n == 0) return;
  CPLAB_LAUNCH_CHECK(positions != nullptr, "invert_positions: null positions of ", rows * n,
                     " entries");
  const auto blocks = static_cast<unsigned>(grid_blocks(rows * n, kThreads, 32768));
  invert_positions_kernel<<<blocks, kThreads, 0, stream>>>(positions, rows, n, inverse, m, bad);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
