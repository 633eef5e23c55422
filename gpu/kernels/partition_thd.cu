#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/token_math.hpp"
#include "gpu/kernels/launch_check.hpp"
#include "gpu/kernels/partition_thd.hpp"
#include "sim/index_math.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void partition_thd_kernel(ThdRow row, ThdTokens out, std::int64_t local) {
  const index_math::ThdMap map{row.cp, row.cu_padded, row.n_docs};
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < local;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const ThdToken t = thd_token(map, row.doc_lens, row.rank, k);
    if (out.index) out.index[k] = t.slot;
    if (out.positions) out.positions[k] = t.position;
    if (out.doc_ids) out.doc_ids[k] = t.doc_id;
    if (out.real) out.real[k] = t.real ? 1 : 0;
  }
}

}  // namespace

void partition_thd(const ThdRow& row, const ThdTokens& out, Stream stream) {
  CPLAB_LAUNCH_CHECK(row.cp >= 1 && row.rank >= 0 && row.rank < row.cp, "partition_thd: rank ",
                     row.rank, " outside [0, ", row.cp, ")");
  CPLAB_LAUNCH_CHECK(
      row.n_docs >= 1 && row.cu_padded != nullptr && row.doc_lens != nullptr,
      "partition_thd: needs cu_seqlens_padded and seq_lens of at least one document, got ",
      row.n_docs);
  CPLAB_LAUNCH_CHECK(row.padded_len >= 0 && row.padded_len % (2 * row.cp) == 0,
                     "partition_thd: row length L=", row.padded_len,
                     " is not a multiple of 2C=", 2 * row.cp);
  const std::int64_t local = row.padded_len / row.cp;
  if (local == 0) return;
  const auto blocks = static_cast<unsigned>(grid_blocks(local, kThreads, 32768));
  partition_thd_kernel<<<blocks, kThreads, 0, stream>>>(row, out, local);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
