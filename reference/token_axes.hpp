#pragma once
// How the verbs see a token-aligned tensor: [outer..., rows, seq, inner...] with the row dim just
// before the seq dim (mRoPE [3,B,S] has outer 3). Every verb moves whole tokens (inner elements
// together), so these few byte-moving helpers serve any dtype and any trailing dims.
#include <cstdint>
#include <vector>

#include "reference/types/tensor.hpp"

namespace cplab::reference::tokens {

struct TokenAxes {
  std::int64_t outer = 1;  // product of the dims before the row dim
  std::int64_t rows = 0;   // B
  std::int64_t seq = 0;    // tokens on the seq dim
  std::int64_t inner = 1;  // product of the dims after the seq dim (hidden, vocabulary, ...)
  std::size_t elem = 0;    // bytes per element

  std::size_t token_bytes() const { return static_cast<std::size_t>(inner) * elem; }
  // Flat element index of (o, b, s, e).
  std::int64_t flat(std::int64_t o, std::int64_t b, std::int64_t s, std::int64_t e = 0) const {
    return ((o * rows + b) * seq + s) * inner + e;
  }
};

// Reads the axes; `what` names the tensor in the error when seq_dim leaves no row dim before it.
TokenAxes token_axes(const Tensor& t, std::int64_t seq_dim, const char* what);

// The shape of t with its row and seq dims replaced.
Shape with_rows_and_seq(const Tensor& t, std::int64_t seq_dim, std::int64_t rows, std::int64_t seq);

// out[o, b, k] = in[o, src_b, maps[b][k]] for k < out_len, with src_b = b (or 0 when `in` has one
// shared row); maps[b][k] = -1 leaves the token zero. One map per output row.
Tensor take_tokens(const Tensor& in, std::int64_t seq_dim,
                   const std::vector<std::vector<std::int64_t>>& maps, std::int64_t out_len);

// out[o, b, maps[b][k]] = in[o, b, k] into an existing tensor with the same outer/inner dims.
void put_tokens(const Tensor& in, std::int64_t seq_dim,
                const std::vector<std::vector<std::int64_t>>& maps, Tensor& out);

// Rows [begin, end) of the row dim (seq_dim - 1).
Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end);

// Multiplies every element by `factor` (gradients: f32, bf16, f16 only).
void scale_gradient(Tensor& t, double factor);

}  // namespace cplab::reference::tokens
