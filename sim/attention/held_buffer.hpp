#pragma once
// What a rank holds while it runs an attention schedule (SPEC §13): a buffer of tokens × heads ×
// d in f32 (values of the dtype it travels in), with the pieces of shards it is made of and the
// global heads it carries. Pieces travel with the data, so the rank can check that what it holds
// is what the schedule says it holds at each step.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/schedule.hpp"
#include "comm/comm.hpp"
#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace cplab::sim {

struct HeldBuffer {
  std::vector<BufferPiece> pieces;
  std::vector<std::int64_t> heads;  // global head of each buffer head
  std::int64_t tokens = 0, d = 0;
  std::vector<float> data;  // [tokens, heads, d]

  std::int64_t width() const { return static_cast<std::int64_t>(heads.size()); }
  std::int64_t stride() const { return width() * d; }  // floats between consecutive tokens
  float* at(std::int64_t t, std::int64_t j) { return data.data() + (t * width() + j) * d; }
  const float* at(std::int64_t t, std::int64_t j) const {
    return data.data() + (t * width() + j) * d;
  }
  // The buffer's position of global head h; -1 when it does not carry it.
  std::int64_t head_index(std::int64_t h) const;
  // The same tokens, heads and pieces, every value 0.
  HeldBuffer zeros_like() const;
};

struct HeldKv {
  HeldBuffer k, v;
};

// Row b of a local tensor [B, ℓ, H, d] as rank `rank`'s own buffer (every head).
HeldBuffer own_buffer(const Tensor& t, std::int64_t b, std::int64_t rank);
// Stores `held` (the rank's own tokens, every head) as row b of `t` [B, ℓ, H, d], rounded to t's
// dtype.
void store_row(Tensor& t, std::int64_t b, const HeldBuffer& held);

// "rank 2 local [0, 8) + rank 3 local [0, 8)".
std::string pieces_str(const std::vector<BufferPiece>& pieces);

// ---- Exchanges. Each buffer travels in `wire` (the input dtype for Q, K, V, dO, O; f32 for the
// LSE and gradients), its pieces ahead of it.

// send_recv of every buffer in `bufs` at once to rank `to`, receiving their like from `from`
// (same shapes), in place.
void pass_buffers(Comm& comm, const std::vector<HeldBuffer*>& bufs, const std::vector<DType>& wire,
                  int to, int from, int tag);
// Every rank's buffer, concatenated in rank order.
HeldBuffer gather_buffers(Comm& comm, const HeldBuffer& mine, DType wire);
// gathered [Σ tokens] in rank order, summed over ranks: this rank's part (reduce-scatter), the
// sum taken in `wire` (rounded at every hop, as NCCL sums a bf16 buffer).
HeldBuffer reduce_to_owners(Comm& comm, const HeldBuffer& gathered, std::int64_t rank, DType wire);

// The Ulysses head all-to-all within `group` (global ranks, this rank among them): this rank sends
// member u its tokens × heads_of[u] and receives every member's tokens × heads_of[me],
// concatenated in group order. comm.all_to_all when the group is the whole comm; else one
// send_recv round per offset within the group (every member pairs with me+o and me-o, so no
// round waits on another).
HeldBuffer group_all_to_all(Comm& comm, const std::vector<int>& group, const HeldBuffer& mine,
                            const std::vector<std::vector<std::int64_t>>& heads_of, DType wire);
// The inverse: `held` (the group's tokens × this rank's heads) goes back to the tokens' owners;
// this rank receives its own tokens × every member's heads and sums them into a buffer of
// `heads` heads (a KV head held by several members gets the sum of their gradients).
HeldBuffer group_all_to_all_back(Comm& comm, const std::vector<int>& group, const HeldBuffer& held,
                                 const std::vector<std::vector<std::int64_t>>& heads_of,
                                 std::int64_t heads, std::int64_t my_tokens, DType wire);

}  // namespace cplab::sim
