#include <cuda_runtime.h>

#include <cmath>

#include "gpu/attention/block_attention.hpp"
#include "gpu/attention/elements.cuh"
#include "gpu/cuda_check.hpp"
#include "gpu/host/copy_plan.hpp"

namespace cplab::gpu {
namespace {

// Keys (or queries) staged in shared memory at a time: two [kChunk][d] f32 arrays fit the default
// 48 KB at the largest head dim, so no launch needs an opt-in shared-memory size.
constexpr int kChunk = 16;
constexpr int kThreads = static_cast<int>(kAttnTile);
static_assert(2 * kChunk * kAttnMaxHeadDim * sizeof(float) <= 48 * 1024);

__device__ __forceinline__ float dot(const float* x, const float* y, std::int64_t n) {
  float s = 0.0f;
  for (std::int64_t e = 0; e < n; ++e) s += x[e] * y[e];
  return s;
}

// Rows [c0, c0 + n) of a block's keys (or queries) of head `h`, `src` [tokens][heads][d], into
// `dst` [n][d] as f32; every thread of the block takes part.
template <typename T>
__device__ void stage(const T* src, const AttnPosition* positions, std::int64_t n,
                      std::int64_t heads, std::int64_t h, std::int64_t d, float* dst) {
  for (std::int64_t x = threadIdx.x; x < n * d; x += blockDim.x) {
    const std::int64_t r = x / d, e = x - r * d;
    dst[x] = attn::load(src + (positions[r].token * heads + h) * d + e);
  }
}

template <typename T>
__device__ void load_row(const T* src, std::int64_t row, std::int64_t d, float* dst) {
  for (std::int64_t e = 0; e < d; ++e) dst[e] = attn::load(src + row * d + e);
}

// One query per thread: an online softmax over the block's keys, staged kChunk at a time. The
// running maximum only ever rises, so every exponent taken is of a difference <= 0.
// One chunk of a block's keys staged for the whole thread block: their K and V rows of KV head
// `hk` into shared memory and their token facts (the forward and dQ kernels read the same).
template <typename T>
__device__ void stage_keys(const BlockAttention& a, const AttnPosition* keys, std::int64_t n,
                           std::int64_t hk, std::int64_t d, float* sk, float* sv,
                           sim::TokenFacts* key_facts) {
  __syncthreads();  // every thread is done with the previous chunk
  stage(static_cast<const T*>(a.k), keys, n, a.kv_heads, hk, d, sk);
  stage(static_cast<const T*>(a.v), keys, n, a.kv_heads, hk, d, sv);
  for (std::int64_t r = threadIdx.x; r < n; r += blockDim.x) key_facts[r] = a.facts[keys[r].fact];
  __syncthreads();
}

template <typename T>
__global__ void block_attention_forward_kernel(BlockAttention a, const AttnTile* tiles, float scale,
                                               T* block_out, float* block_lse) {
  extern __shared__ float staged[];
  __shared__ sim::TokenFacts key_facts[kChunk];
  const std::int64_t d = a.head_dim, h = blockIdx.y, hk = h * a.kv_heads / a.heads;
  float* sk = staged;
  float* sv = staged + kChunk * d;
  const AttnTile tile = tiles[blockIdx.x];
  const AttnBlock blk = a.blocks[tile.block];
  const std::int64_t i = tile.begin + threadIdx.x;
  const bool active = threadIdx.x < tile.len;
  float q[kAttnMaxHeadDim], acc[kAttnMaxHeadDim];
  sim::TokenFacts qf{};
  if (active) {
    const AttnPosition p = a.queries[blk.q_begin + i];
    qf = a.facts[p.fact];
    load_row(static_cast<const T*>(a.q), p.token * a.heads + h, d, q);
    for (std::int64_t e = 0; e < d; ++e) acc[e] = 0.0f;
  }
  float m = -INFINITY, s = 0.0f;
  const AttnPosition* keys = a.keys + blk.k_begin;
  for (std::int64_t c0 = 0; c0 < blk.k_len; c0 += kChunk) {
    const std::int64_t n = min(static_cast<std::int64_t>(kChunk), blk.k_len - c0);
    stage_keys<T>(a, keys + c0, n, hk, d, sk, sv, key_facts);
    if (!active) continue;
    for (std::int64_t r = 0; r < n; ++r) {
      if (!sim::block_pair_visible(blk.mask, blk.diagonal, i, c0 + r, qf, key_facts[r], a.rule))
        continue;
      const float x = dot(q, sk + r * d, d) * scale;
      const float* vr = sv + r * d;
      if (x > m) {
        const float shrink = expf(m - x);  // 0 while m is -inf
        s = s * shrink + 1.0f;
        for (std::int64_t e = 0; e < d; ++e) acc[e] = acc[e] * shrink + vr[e];
        m = x;
      } else {
        const float p = expf(x - m);
        s += p;
        for (std::int64_t e = 0; e < d; ++e) acc[e] += p * vr[e];
      }
    }
  }
  if (!active) return;
  const std::int64_t row = (blk.out_begin + i) * a.heads + h;
  const float inv = s > 0.0f ? 1.0f / s : 0.0f;
  for (std::int64_t e = 0; e < d; ++e) attn::store(block_out + row * d + e, acc[e] * inv);
  block_lse[row] = s > 0.0f ? m + logf(s) : -INFINITY;
}

template <typename T>
__global__ void attention_delta_kernel(std::int64_t rows, std::int64_t d, const T* out,
                                       const T* grad_out, float* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (std::int64_t e = 0; e < d; ++e)
      s += attn::load(out + r * d + e) * attn::load(grad_out + r * d + e);
    delta[r] = s;
  }
}

// One query per thread: dQ = scale · Σ_j dS_j k_j with P recomputed from the final LSE, added once
// per element at the end (another block of the step may hold the same query).
template <typename T>
__global__ void block_attention_backward_dq_kernel(BlockAttention a, const AttnTile* tiles,
                                                   float scale, const T* grad_out, const float* lse,
                                                   const float* delta, float* grad_q) {
  extern __shared__ float staged[];
  __shared__ sim::TokenFacts key_facts[kChunk];
  const std::int64_t d = a.head_dim, h = blockIdx.y, hk = h * a.kv_heads / a.heads;
  float* sk = staged;
  float* sv = staged + kChunk * d;
  const AttnTile tile = tiles[blockIdx.x];
  const AttnBlock blk = a.blocks[tile.block];
  const std::int64_t i = tile.begin + threadIdx.x;
  const bool active = threadIdx.x < tile.len;
  float q[kAttnMaxHeadDim], dout[kAttnMaxHeadDim], acc[kAttnMaxHeadDim];
  sim::TokenFacts qf{};
  float l = -INFINITY, dl = 0.0f;
  std::int64_t qrow = 0;
  if (active) {
    const AttnPosition p = a.queries[blk.q_begin + i];
    qf = a.facts[p.fact];
    qrow = p.token * a.heads + h;
    l = lse[qrow];
    dl = delta[qrow];
    load_row(static_cast<const T*>(a.q), qrow, d, q);
    load_row(grad_out, qrow, d, dout);
    for (std::int64_t e = 0; e < d; ++e) acc[e] = 0.0f;
  }
  const bool sees = active && l != -INFINITY;
  const AttnPosition* keys = a.keys + blk.k_begin;
  for (std::int64_t c0 = 0; c0 < blk.k_len; c0 += kChunk) {
    const std::int64_t n = min(static_cast<std::int64_t>(kChunk), blk.k_len - c0);
    stage_keys<T>(a, keys + c0, n, hk, d, sk, sv, key_facts);
    if (!sees) continue;
    for (std::int64_t r = 0; r < n; ++r) {
      if (!sim::block_pair_visible(blk.mask, blk.diagonal, i, c0 + r, qf, key_facts[r], a.rule))
        continue;
      const float p = expf(dot(q, sk + r * d, d) * scale - l);
      const float ds = p * (dot(dout, sv + r * d, d) - dl);
      for (std::int64_t e = 0; e < d; ++e) acc[e] += ds * sk[r * d + e];
    }
  }
  if (!sees) return;
  for (std::int64_t e = 0; e < d; ++e) atomicAdd(grad_q + qrow * d + e, acc[e] * scale);
}

// One key per thread, for one query head h: that head's share of the key's dV = Σ_i P_i dO_i and
// dK = scale · Σ_i dS_i q_i over the block's queries, added once per element at the end into the
// key's KV head ⌊h·H_kv/H⌋ (the other heads reading that KV head, and other blocks holding the
// key, add theirs: a grid over query heads rather than KV heads keeps G = H/H_kv times more
// threads busy).
template <typename T>
__global__ void block_attention_backward_dkv_kernel(BlockAttention a, const AttnTile* tiles,
                                                    float scale, const T* grad_out,
                                                    const float* lse, const float* delta,
                                                    float* grad_k, float* grad_v) {
  extern __shared__ float staged[];
  __shared__ sim::TokenFacts query_facts[kChunk];
  __shared__ float query_lse[kChunk], query_delta[kChunk];
  const std::int64_t d = a.head_dim, h = blockIdx.y, hk = h * a.kv_heads / a.heads;
  float* sq = staged;
  float* sdo = staged + kChunk * d;
  const AttnTile tile = tiles[blockIdx.x];
  const AttnBlock blk = a.blocks[tile.block];
  const std::int64_t j = tile.begin + threadIdx.x;
  const bool active = threadIdx.x < tile.len;
  float k[kAttnMaxHeadDim], v[kAttnMaxHeadDim], dk[kAttnMaxHeadDim], dv[kAttnMaxHeadDim];
  sim::TokenFacts kf{};
  std::int64_t krow = 0;
  if (active) {
    const AttnPosition p = a.keys[blk.k_begin + j];
    kf = a.facts[p.fact];
    krow = p.token * a.kv_heads + hk;
    load_row(static_cast<const T*>(a.k), krow, d, k);
    load_row(static_cast<const T*>(a.v), krow, d, v);
    for (std::int64_t e = 0; e < d; ++e) dk[e] = dv[e] = 0.0f;
  }
  const AttnPosition* queries = a.queries + blk.q_begin;
  for (std::int64_t c0 = 0; c0 < blk.q_len; c0 += kChunk) {
    const std::int64_t n = min(static_cast<std::int64_t>(kChunk), blk.q_len - c0);
    __syncthreads();
    stage(static_cast<const T*>(a.q), queries + c0, n, a.heads, h, d, sq);
    stage(grad_out, queries + c0, n, a.heads, h, d, sdo);
    for (std::int64_t r = threadIdx.x; r < n; r += blockDim.x) {
      const AttnPosition p = queries[c0 + r];
      query_facts[r] = a.facts[p.fact];
      query_lse[r] = lse[p.token * a.heads + h];
      query_delta[r] = delta[p.token * a.heads + h];
    }
    __syncthreads();
    if (!active) continue;
    for (std::int64_t r = 0; r < n; ++r) {
      if (query_lse[r] == -INFINITY ||
          !sim::block_pair_visible(blk.mask, blk.diagonal, c0 + r, j, query_facts[r], kf, a.rule))
        continue;
      const float* qr = sq + r * d;
      const float* dor = sdo + r * d;
      const float p = expf(dot(qr, k, d) * scale - query_lse[r]);
      const float ds = p * (dot(dor, v, d) - query_delta[r]);
      for (std::int64_t e = 0; e < d; ++e) {
        dv[e] += p * dor[e];
        dk[e] += ds * qr[e];
      }
    }
  }
  if (!active) return;
  for (std::int64_t e = 0; e < d; ++e) {
    atomicAdd(grad_k + krow * d + e, dk[e] * scale);
    atomicAdd(grad_v + krow * d + e, dv[e]);
  }
}

void check(const BlockAttention& a, std::int64_t tile_count, const char* what) {
  CPLAB_LAUNCH_CHECK(a.heads >= 1 && a.heads <= 65535 && a.kv_heads >= 1 && a.kv_heads <= a.heads,
                     what, ": heads H=", a.heads, " and KV heads H_kv=", a.kv_heads,
                     " (1 <= H_kv <= H <= 65535)");
  CPLAB_LAUNCH_CHECK(a.head_dim >= 1 && a.head_dim <= kAttnMaxHeadDim, what,
                     ": head dim d=", a.head_dim, " outside [1, ", kAttnMaxHeadDim, "]");
  CPLAB_LAUNCH_CHECK(tile_count >= 0 && tile_count <= 0x7fffffff, what, ": ", tile_count, " tiles");
  CPLAB_LAUNCH_CHECK(
      tile_count == 0 || (a.q && a.k && a.v && a.queries && a.keys && a.blocks && a.facts), what,
      ": a required device array is null");
}

float softmax_scale(const BlockAttention& a) {
  return 1.0f / std::sqrt(static_cast<float>(a.head_dim));
}

std::size_t staged_bytes(const BlockAttention& a) {
  return static_cast<std::size_t>(2 * kChunk * a.head_dim) * sizeof(float);
}

}  // namespace

void block_attention_forward(const BlockAttention& a, const AttnTile* tiles,
                             std::int64_t tile_count, void* block_out, float* block_lse,
                             Stream stream) {
  check(a, tile_count, "block_attention_forward");
  if (tile_count == 0) return;
  CPLAB_LAUNCH_CHECK(tiles && block_out && block_lse,
                     "block_attention_forward: a required device array is null");
  const dim3 grid(static_cast<unsigned>(tile_count), static_cast<unsigned>(a.heads));
  attn::visit_element(a.elem, "block_attention_forward", [&](auto element) {
    using T = decltype(element);
    block_attention_forward_kernel<T><<<grid, kThreads, staged_bytes(a), stream>>>(
        a, tiles, softmax_scale(a), static_cast<T*>(block_out), block_lse);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void attention_delta(AttnElem elem, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                     const void* out, const void* grad_out, float* delta, Stream stream) {
  CPLAB_LAUNCH_CHECK(tokens >= 0 && heads >= 1 && head_dim >= 1, "attention_delta: tokens=", tokens,
                     " heads=", heads, " head_dim=", head_dim);
  const std::int64_t rows = tokens * heads;
  if (rows == 0) return;
  attn::visit_element(elem, "attention_delta", [&](auto element) {
    using T = decltype(element);
    const auto blocks = static_cast<unsigned>(grid_blocks(rows, 128, 32768));
    attention_delta_kernel<T><<<blocks, 128, 0, stream>>>(
        rows, head_dim, static_cast<const T*>(out), static_cast<const T*>(grad_out), delta);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void block_attention_backward_dq(const BlockAttention& a, const AttnTile* query_tiles,
                                 std::int64_t tile_count, const void* grad_out, const float* lse,
                                 const float* delta, float* grad_q, Stream stream) {
  check(a, tile_count, "block_attention_backward_dq");
  if (tile_count == 0) return;
  CPLAB_LAUNCH_CHECK(query_tiles && grad_out && lse && delta && grad_q,
                     "block_attention_backward_dq: a required device array is null");
  const dim3 grid(static_cast<unsigned>(tile_count), static_cast<unsigned>(a.heads));
  attn::visit_element(a.elem, "block_attention_backward_dq", [&](auto element) {
    using T = decltype(element);
    block_attention_backward_dq_kernel<T><<<grid, kThreads, staged_bytes(a), stream>>>(
        a, query_tiles, softmax_scale(a), static_cast<const T*>(grad_out), lse, delta, grad_q);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

void block_attention_backward_dkv(const BlockAttention& a, const AttnTile* key_tiles,
                                  std::int64_t tile_count, const void* grad_out, const float* lse,
                                  const float* delta, float* grad_k, float* grad_v, Stream stream) {
  check(a, tile_count, "block_attention_backward_dkv");
  if (tile_count == 0) return;
  CPLAB_LAUNCH_CHECK(key_tiles && grad_out && lse && delta && grad_k && grad_v,
                     "block_attention_backward_dkv: a required device array is null");
  const dim3 grid(static_cast<unsigned>(tile_count), static_cast<unsigned>(a.heads));
  attn::visit_element(a.elem, "block_attention_backward_dkv", [&](auto element) {
    using T = decltype(element);
    block_attention_backward_dkv_kernel<T><<<grid, kThreads, staged_bytes(a), stream>>>(
        a, key_tiles, softmax_scale(a), static_cast<const T*>(grad_out), lse, delta, grad_k,
        grad_v);
  });
  CPLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cplab::gpu
