#pragma once
// Host-side planning of CP attention by schedule on the device (SPEC §13): one step of a rank's
// schedule, over every row of the microbatch, as the flat arrays the block-attention kernels read
// (gpu/attention/). Plain C++ built with or without CUDA, so the CPU tests check the very arrays
// the launchers upload: which buffer position reads which tensor row and which token facts, which
// tiles a launch covers, which block outputs merge into which query, the bytes a ring step moves.
//
// The kernels never see a piece or a schedule: every position is resolved here, once, and each
// piece is checked against what the rank holds (a schedule that names a shard the rank does not
// hold is refused here, not read out of bounds on the device).
#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "core/dtype.hpp"
#include "gpu/host/attention_launch.hpp"

namespace cplab::gpu {

// Where each rank's shard sits in the held array the kernels read: rank-major, [B][ℓ] within a
// shard (the ring holds one shard, its step's kv_from; the all-gather every rank's), or, after a
// Ulysses head all-to-all, the whole sequence in global order, [B][L] (`by_slot`).
struct HeldKeys {
  std::int64_t rows = 0, local = 0;
  std::vector<std::int64_t> shard_of_rank;  // per rank: its shard's place in the array, -1 absent
  bool by_slot = false;                     // token of (rank, b, k): b·L + its global slot

  static HeldKeys one(std::int64_t cp, std::int64_t rank, std::int64_t rows, std::int64_t local);
  static HeldKeys all(std::int64_t cp, std::int64_t rows, std::int64_t local);
  static HeldKeys sequence(std::int64_t cp, std::int64_t rows, std::int64_t local);
  bool holds(std::int64_t rank) const;
  std::int64_t shards() const;                                     // shards in the array
  std::int64_t tokens() const { return shards() * rows * local; }  // rows of the array
  // Row of the held array of rank `rank`'s local token `k`, global slot `slot`, in microbatch row
  // `b` (held only).
  std::int64_t token(std::int64_t rank, std::int64_t b, std::int64_t k, std::int64_t slot) const {
    if (by_slot) return b * shards() * local + slot;
    return (shard_of_rank[static_cast<std::size_t>(rank)] * rows + b) * local + k;
  }
};

// One step of one rank over every row: what one forward launch, one merge launch and the two
// backward launches read.
struct StepLaunch {
  std::vector<AttnPosition> queries, keys;
  std::vector<AttnBlock> blocks;
  std::vector<AttnTile> query_tiles, key_tiles;
  std::int64_t out_rows = 0;  // rows of the block-output scratch (Σ blocks' q_len)
  std::int64_t pairs = 0;     // Σ blocks' pairs, as the schedule counts them
  // The merge, per query token the step touches (ascending): merge_tokens[t] receives block-output
  // rows merge_rows[merge_offsets[t] .. merge_offsets[t + 1]), in block order. One thread per
  // token and head walks its list, so blocks sharing a query never race and merge in one order.
  std::vector<std::int64_t> merge_tokens, merge_offsets, merge_rows;
};

// What an algorithm checks of a step before it plans it: the exchange that brought its buffers is
// one of `exchanges`, the rank holds the K/V of `kv_from` (-1: of several, the pieces say which)
// and computes all `heads` query heads, as the schedule says for every row. Throws naming the
// row, the step and what disagrees: a data movement and a schedule that disagree are an error.
void check_step_source(const std::vector<sim::AttentionSchedule>& rows, std::size_t step,
                       std::int64_t rank, const std::vector<sim::Exchange>& exchanges,
                       std::int64_t kv_from, std::int64_t heads);

// The step `step` of rank `rank` over every row's schedule, for keys from `held` and queries from
// `held_queries`, or, when that is null, from the rank's own shard (token b·ℓ + k). Throws, naming
// the row, the step and the rank, when a query piece is not the rank's own (or not held), a key
// piece names a shard not held, a piece leaves [0, ℓ), a block leaves its buffers, is empty or is
// masked `skip`, or the rows disagree on the step count.
StepLaunch plan_step(const std::vector<sim::AttentionSchedule>& rows, std::size_t step,
                     std::int64_t rank, const HeldKeys& held, std::int64_t tile = kAttnTile,
                     const HeldKeys* held_queries = nullptr);

// Tiles of `tile` rows over each block's query (or key) range, in block order.
std::vector<AttnTile> block_tiles(const std::vector<AttnBlock>& blocks, bool keys,
                                  std::int64_t tile);

// The facts table every doc-causal block reads, [B][L]: slot, document and realness of every
// global slot of every row. Uploaded once per call.
std::vector<sim::TokenFacts> token_facts(const std::vector<sim::AttentionSchedule>& rows);

// Pairs the launch's blocks keep, asking sim::block_pair_visible over the resolved positions and
// the facts table as the kernels do: the schedule's count when the plan resolved it faithfully.
// O(pairs) on the host: for tests and checks at test sizes.
std::int64_t launch_pairs(const StepLaunch& launch, const std::vector<sim::TokenFacts>& facts,
                          const sim::MaskRule& rule);

// Bytes one rank puts on the wire in one ring step of `tokens` local tokens (every row): K and V
// in their dtype forward; backward, K and V again with dK and dV in f32 (their accumulators travel
// unrounded).
struct RingStepBytes {
  std::int64_t forward = 0;
  std::int64_t backward = 0;
  std::int64_t delivery = 0;  // dK, dV to their owner after the last backward step
};
RingStepBytes ring_step_bytes(std::int64_t tokens, std::int64_t kv_heads, std::int64_t head_dim,
                              DType dtype);

}  // namespace cplab::gpu
