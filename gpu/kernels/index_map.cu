#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/kernels/index_map.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 32768;

template <typename Map>
__global__ void index_map_kernel(Map map, std::int64_t first_rank, std::int64_t total,
                                 std::int64_t* out) {
  const std::int64_t local = map.local_len();
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / local;
    out[i] = map.global_index(first_rank + r, i - r * local);
  }
}

template <typename Map>
__global__ void owner_map_kernel(Map map, std::int64_t padded_len, std::int64_t* out) {
  const std::int64_t local = map.local_len();
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       g < padded_len; g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const index_math::Slot slot = map.owner(g);
    out[g] = slot.rank * local + slot.offset;
  }
}

unsigned blocks_for(std::int64_t items) {
  return static_cast<unsigned>(grid_blocks(items, kThreads, kMaxBlocks));
}

}  // namespace

void index_map(const MapView& map, std::int64_t first_rank, std::int64_t ranks, std::int64_t* out,
               Stream stream) {
  validate_map(map, "index_map");
  CPLAB_LAUNCH_CHECK(first_rank >= 0 && ranks >= 0 && first_rank + ranks <= map.cp,
                     "index_map: ranks [", first_rank, ", ", first_rank + ranks, ") outside [0, ",
                     map.cp, ")");
  const std::int64_t total = ranks * map.local_len();
  if (total == 0) return;
  CPLAB_LAUNCH_CHECK(out != nullptr, "index_map: null output for ", total, " entries");
  visit_map(map, [&](auto m) {
    index_map_kernel<<<blocks_for(total), kThreads, 0, stream>>>(m, first_rank, total, out);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void owner_map(const MapView& map, std::int64_t* out, Stream stream) {
  validate_map(map, "owner_map");
  if (map.padded_len == 0) return;
  CPLAB_LAUNCH_CHECK(out != nullptr, "owner_map: null output for L=", map.padded_len);
  visit_map(map, [&](auto m) {
    owner_map_kernel<<<blocks_for(map.padded_len), kThreads, 0, stream>>>(m, map.padded_len, out);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
