#include <cuda_runtime.h>

#include <cstring>

#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"
#include "gpu/host/token_math.hpp"
#include "gpu/kernels/copy_tokens.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu {
namespace {

constexpr std::int64_t kMaxBlocks = 32768;  // enough to fill any current GPU; larger inputs loop

struct CopyArgs {
  const unsigned char* src;
  unsigned char* dst;
  std::int64_t outer, rows, src_rows, src_row_begin, token_bytes, src_tokens, src_block, dst_tokens,
      dst_block;
  const std::int64_t* source;
  std::int64_t source_rows;
  std::uint64_t fill;  // the pattern's first 8 bytes: its period (the element size) divides 8
  std::int64_t* bad;
  std::int64_t chunks, threads_per_token;
};

// The fill bytes of the piece at byte offset `at` of a token (pieces are aligned to their width).
template <typename V>
__device__ __forceinline__ V fill_piece(std::uint64_t fill, std::int64_t at) {
  if constexpr (sizeof(V) == 16) {
    const auto lo = static_cast<unsigned>(fill), hi = static_cast<unsigned>(fill >> 32);
    return V{lo, hi, lo, hi};
  } else if constexpr (sizeof(V) == 8) {
    return V{static_cast<unsigned>(fill), static_cast<unsigned>(fill >> 32)};
  } else {
    return static_cast<V>(fill_bits(fill, at, sizeof(V)));
  }
}

template <typename V>
__global__ void copy_tokens_kernel(CopyArgs a) {
  const std::int64_t tpt = a.threads_per_token;
  const std::int64_t lane = threadIdx.x % tpt;
  const std::int64_t per_block = blockDim.x / tpt;
  const std::int64_t slices = a.outer * a.rows;
  const std::int64_t total = slices * a.dst_tokens;
  for (std::int64_t item = blockIdx.x * per_block + threadIdx.x / tpt; item < total;
       item += static_cast<std::int64_t>(gridDim.x) * per_block) {
    const std::int64_t slice = item / a.dst_tokens;  // o·rows + b
    const std::int64_t t = item - slice * a.dst_tokens;
    const std::int64_t o = slice / a.rows, b = slice - o * a.rows;
    const std::int64_t s = a.source[(a.source_rows == 1 ? 0 : b) * a.dst_tokens + t];
    V* dst = reinterpret_cast<V*>(
        a.dst + token_offset(slice, t, a.dst_tokens, a.dst_block, slices) * a.token_bytes);
    if (s >= 0 && s < a.src_tokens) {
      const std::int64_t src_slice = o * a.src_rows + (a.src_rows == 1 ? 0 : a.src_row_begin + b);
      const V* src = reinterpret_cast<const V*>(
          a.src + token_offset(src_slice, s, a.src_tokens, a.src_block, a.outer * a.src_rows) *
                      a.token_bytes);
      for (std::int64_t c = lane; c < a.chunks; c += tpt) dst[c] = src[c];
    } else {
      if (s != -1 && a.bad != nullptr && lane == 0)
        atomicMin(reinterpret_cast<long long*>(a.bad), item);
      for (std::int64_t c = lane; c < a.chunks; c += tpt) {
        dst[c] = fill_piece<V>(a.fill, c * static_cast<std::int64_t>(sizeof(V)));
      }
    }
  }
}

template <typename V>
void launch(const CopyArgs& a, std::int64_t blocks, Stream stream) {
  copy_tokens_kernel<V>
      <<<static_cast<unsigned>(blocks), static_cast<unsigned>(kCopyBlockThreads), 0, stream>>>(a);
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void copy_tokens(const TokenCopy& c, Stream stream) {
  CPLAB_LAUNCH_CHECK(c.outer >= 0 && c.rows >= 0, "copy_tokens: negative outer ", c.outer,
                     " or rows ", c.rows);
  CPLAB_LAUNCH_CHECK(
      c.src_rows == 1 || (c.src_row_begin >= 0 && c.src_row_begin + c.rows <= c.src_rows),
      "copy_tokens: rows [", c.src_row_begin, ", ", c.src_row_begin + c.rows, ") of a source with ",
      c.src_rows, " rows");
  CPLAB_LAUNCH_CHECK(c.source_rows == 1 || c.source_rows == c.rows, "copy_tokens: index has ",
                     c.source_rows, " rows for a tensor of ", c.rows);
  CPLAB_LAUNCH_CHECK(c.src_tokens >= 0 && c.dst_tokens >= 0, "copy_tokens: negative token counts ",
                     c.src_tokens, " -> ", c.dst_tokens);
  CPLAB_LAUNCH_CHECK(c.src_block >= 0 && (c.src_block == 0 || c.src_tokens % c.src_block == 0),
                     "copy_tokens: source of ", c.src_tokens, " tokens is not made of blocks of ",
                     c.src_block);
  CPLAB_LAUNCH_CHECK(c.dst_block >= 0 && (c.dst_block == 0 || c.dst_tokens % c.dst_block == 0),
                     "copy_tokens: destination of ", c.dst_tokens,
                     " tokens is not made of blocks of ", c.dst_block);
  CPLAB_LAUNCH_CHECK(
      c.element_bytes == 1 || c.element_bytes == 2 || c.element_bytes == 4 || c.element_bytes == 8,
      "copy_tokens: element size ", c.element_bytes, " is not 1, 2, 4 or 8 bytes");
  CPLAB_LAUNCH_CHECK(c.token_bytes >= 0 && c.token_bytes % c.element_bytes == 0,
                     "copy_tokens: token of ", c.token_bytes, " bytes is not whole elements of ",
                     c.element_bytes);
  const std::int64_t total = c.outer * c.rows * c.dst_tokens;
  if (total == 0 || c.token_bytes == 0) return;
  CPLAB_LAUNCH_CHECK(
      c.dst != nullptr && c.source != nullptr && (c.src != nullptr || c.src_tokens == 0),
      "copy_tokens: null pointer (src ", c.src, ", dst ", c.dst, ", source ", c.source, ")");
  const CopyPlan plan = plan_copy(reinterpret_cast<std::uintptr_t>(c.src),
                                  reinterpret_cast<std::uintptr_t>(c.dst), c.token_bytes);
  CopyArgs a{static_cast<const unsigned char*>(c.src),
             static_cast<unsigned char*>(c.dst),
             c.outer,
             c.rows,
             c.src_rows,
             c.src_row_begin,
             c.token_bytes,
             c.src_tokens,
             c.src_block,
             c.dst_tokens,
             c.dst_block,
             c.source,
             c.source_rows,
             0,
             c.bad,
             plan.chunks,
             plan.threads_per_token};
  std::memcpy(&a.fill, c.fill.data(), sizeof a.fill);
  const std::int64_t blocks = grid_blocks(total, plan.tokens_per_block, kMaxBlocks);
  switch (plan.width) {
    case 16:
      return launch<uint4>(a, blocks, stream);
    case 8:
      return launch<uint2>(a, blocks, stream);
    case 4:
      return launch<unsigned>(a, blocks, stream);
    case 2:
      return launch<unsigned short>(a, blocks, stream);
    default:
      return launch<unsigned char>(a, blocks, stream);
  }
}

}  // namespace cplab::gpu
