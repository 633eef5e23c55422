#pragma once
// The Ulysses head all-to-all (SPEC §10.5) as index arrays over head slices (the d elements of one
// token's head): which local slice every slice of the send buffer takes, and which received slice
// every slice of the output takes. The twin (sim/sim_ulysses.cpp) and the GPU path
// (gpu/impl/gpu_ulysses.cpp) move their data by these arrays with one all-to-all between, so the
// index math is written once; only the reference (reference/ulysses.cpp) derives it on its own.
//
// Send block u (U blocks, one per destination) holds, for every local token t in row-major order
// of [B, ℓ], the heads of u's group, padded to the widest group W: slice u·(B·ℓ·W) + t·W + j.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/shard_layout.hpp"
#include "core/ulysses_heads.hpp"

namespace cplab::sim {

// The standard head split: rank u of U receives query heads [u·H/U, (u+1)·H/U); KV heads fewer
// than U are repeated up to U (rank u gets KV head u·H_kv/U).
std::vector<std::int64_t> standard_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                            std::int64_t group, std::int64_t u);

struct UlyssesGroup {
  std::int64_t group = 1, me = 0, rows = 0, local_len = 0, padded_len = 0;
  std::int64_t local_heads = 0;                          // H (or H_kv) of the local tensor
  std::vector<std::vector<std::int64_t>> heads_of_rank;  // [U]: local heads rank u receives
  std::vector<std::int64_t> maps;  // [U·B·ℓ]: every rank's index map, all-gathered
  std::int64_t width() const;      // W: the most heads any rank receives
  std::int64_t mine() const;       // n: the heads this rank receives
  std::int64_t block() const { return rows * local_len * width(); }  // slices per send block
};

// Rank `me` of a group of `group` ranks, after checking the layout (recorded, for the group's C)
// and the head counts; heads_of(u) gives rank u's heads. `maps` is left for the caller to
// all-gather (from flat_index_map) over its own comm, then to check with check_index_maps.
UlyssesGroup ulysses_group(const ShardLayout& layout, const UlyssesHeads& heads, HeadKind kind,
                           std::int64_t group, std::int64_t me,
                           const std::function<std::vector<std::int64_t>(std::int64_t)>& heads_of,
                           const char* verb);
// The maps are checked to lie in [0, L).
void check_index_maps(const UlyssesGroup& g, const char* verb);
// This rank's index map rows back to back ([B·ℓ]), what every rank contributes to `maps`.
std::vector<std::int64_t> flat_index_map(const ShardLayout& layout, const char* verb);

struct UlyssesRoute {
  std::vector<std::int64_t> send_source;  // [U·block]: source slice of each send slice; -1 = zeros
  std::vector<std::int64_t> out_source;   // output slices: received slice of each; -1 = zeros
};

// Local [B, ℓ, H, d] → [B, L, n, d]: send slices from the local tensor's [B·ℓ·H] slices; output
// slice (b·L + g)·n + j from rank p's slice for its local token k with map[p][b][k] = g.
UlyssesRoute forward_route(const UlyssesGroup& g);
// [B, L, n, d] → [B, ℓ, H, d]: block p takes this rank's heads at rank p's slots; local head i
// comes back from the first rank (and place in its group) that holds it (throws if none does).
UlyssesRoute inverse_route(const UlyssesGroup& g, const char* verb);

// dst slice i = src slice source[i] (zeros for -1), each slice `slice_bytes` long.
void move_slices(const std::byte* src, std::byte* dst, const std::vector<std::int64_t>& source,
                 std::size_t slice_bytes);

}  // namespace cplab::sim
