#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/token_math.hpp"
#include "gpu/kernels/launch_check.hpp"
#include "gpu/kernels/partition_tokens.hpp"

namespace cplab::gpu {
namespace {

constexpr int kThreads = 256;

template <typename Map>
__global__ void partition_tokens_kernel(Map map, RelaidRow row, RelaidTokens out,
                                        std::int64_t local) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < local;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const RelaidToken t = relaid_token(map, row.doc_bounds, row.n_docs, row.doc_lens, row.rank, k);
    if (out.index) out.index[k] = t.slot;
    if (out.positions) out.positions[k] = t.position;
    if (out.doc_ids) out.doc_ids[k] = t.doc_id;
    if (out.real) out.real[k] = t.real ? 1 : 0;
  }
}

}  // namespace

void partition_tokens(const RelaidRow& row, const RelaidTokens& out, Stream stream) {
  validate_map(row.map, "partition_tokens");
  CPLAB_LAUNCH_CHECK(row.rank >= 0 && row.rank < row.map.cp, "partition_tokens: rank ", row.rank,
                     " outside [0, ", row.map.cp, ")");
  CPLAB_LAUNCH_CHECK(
      row.n_docs >= 1 && row.doc_bounds != nullptr && row.doc_lens != nullptr,
      "partition_tokens: needs the document bounds and seq_lens of at least one document, got ",
      row.n_docs);
  const std::int64_t local = row.map.local_len();
  if (local == 0) return;
  const auto blocks = static_cast<unsigned>(grid_blocks(local, kThreads, 32768));
  visit_map(row.map, [&](auto m) {
    partition_tokens_kernel<<<blocks, kThreads, 0, stream>>>(m, row, out, local);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
