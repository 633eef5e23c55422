#pragma once
// Attention of the blocks of one schedule step (SPEC §13.3) on the device, forward and backward,
// over the arrays gpu/host/attention_plan.hpp resolves. Every pair is masked by
// sim::block_pair_visible, the one predicate the twin, the schedule's pair counts and its
// coverage property ask too: these kernels never derive a mask of their own.
//
// Layouts: q, grad_out [tokens][H][d] and k, v [held tokens][H_kv][d] in the input dtype (f32,
// bf16 or f16); query head h reads KV head ⌊h·H_kv/H⌋; softmax scale 1/sqrt(d). Block outputs are
// rounded to the input dtype (the precision contract of implementation/cp_attention.hpp); LSEs,
// deltas and every gradient accumulator are f32.
//
// One thread block per tile (gpu/host/attention_plan.hpp's kAttnTile rows of one block) and head,
// one thread per query (or key) of the tile, keys (or queries) streamed through shared memory in
// small chunks. Simple over fast: this path checks schedules against the twin at test sizes; its
// benchmark reports how far it is from one unsharded launch of the same kernels, not from
// FlashAttention.
#include <cstdint>

#include "attention/block_mask.hpp"
#include "gpu/device.hpp"
#include "gpu/host/attention_launch.hpp"

namespace cplab::gpu {

inline constexpr std::int64_t kAttnMaxHeadDim = 256;

// One step's launch: the plan's arrays on the device and the tensors they index.
struct BlockAttention {
  AttnElem elem = AttnElem::f32;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0;  // H, H_kv, d
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const AttnPosition* queries = nullptr;
  const AttnPosition* keys = nullptr;
  const AttnBlock* blocks = nullptr;
  std::int64_t block_count = 0;
  const sim::TokenFacts* facts = nullptr;  // the [B][L] table of token_facts
  sim::MaskRule rule{};                    // the rows' mask, read by per-token blocks
};

// Forward of every block: block_out [out_rows][H][d] in the input dtype (0 for a query the block
// shows no key) and block_lse [out_rows][H] f32 (-inf there), one launch over `tiles` (query
// tiles of the plan).
void block_attention_forward(const BlockAttention& a, const AttnTile* tiles,
                             std::int64_t tile_count, void* block_out, float* block_lse,
                             Stream stream);

// delta[token][h] = Σ_e grad_out · out over the head dim, out being the final output in the
// input dtype (as returned): the row term of the softmax backward.
void attention_delta(AttnElem elem, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                     const void* out, const void* grad_out, float* delta, Stream stream);

// Backward of every block, P recomputed from the final LSE [tokens][H] (f32; -inf: the query saw
// nothing and gets no gradient) and delta. grad_q [tokens][H][d] f32 is accumulated over
// `query_tiles`; grad_k, grad_v [held tokens][H_kv][d] f32 over `key_tiles` and every query head
// (zero them first).
void block_attention_backward_dq(const BlockAttention& a, const AttnTile* query_tiles,
                                 std::int64_t tile_count, const void* grad_out, const float* lse,
                                 const float* delta, float* grad_q, Stream stream);
void block_attention_backward_dkv(const BlockAttention& a, const AttnTile* key_tiles,
                                  std::int64_t tile_count, const void* grad_out, const float* lse,
                                  const float* delta, float* grad_k, float* grad_v, Stream stream);

}  // namespace cplab::gpu
