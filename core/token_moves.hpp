#pragma once
// Moving whole tokens of a token-aligned tensor [outer..., rows, seq, inner...], the row dim just
// before the seq dim (mRoPE [3,B,S] has outer 3): select them by per-row index maps, place them,
// or cut rows. Every verb moves whole tokens (inner elements together), so these byte copies serve
// any dtype and any trailing dims. Plumbing only: which token goes where (the index maps) is each
// caller's own derivation.
#include <cstdint>
#include <vector>

#include "core/batch.hpp"
#include "core/tensor.hpp"

namespace cplab {

struct TokenAxes {
  std::int64_t outer = 1;  // product of the dims before the row dim
  std::int64_t rows = 0;   // B
  std::int64_t seq = 0;    // tokens on the seq dim
  std::int64_t inner = 1;  // product of the dims after the seq dim (hidden, vocabulary, ...)
  std::size_t elem = 0;    // bytes per element

  std::size_t token_bytes() const { return static_cast<std::size_t>(inner) * elem; }
  // Flat token index of (o, b, s).
  std::int64_t token(std::int64_t o, std::int64_t b, std::int64_t s) const {
    return (o * rows + b) * seq + s;
  }
  // Flat element index of (o, b, s, e).
  std::int64_t flat(std::int64_t o, std::int64_t b, std::int64_t s, std::int64_t e = 0) const {
    return token(o, b, s) * inner + e;
  }
};

// One index map per row: entry k names a token on the seq dim (-1: none).
using RowMaps = std::vector<std::vector<std::int64_t>>;

// Reads the axes of t; `what` names the caller in the error when seq_dim has no row dim before it.
TokenAxes token_axes(const Tensor& t, std::int64_t seq_dim, const char* what);

// The shape of t with its row and seq dims replaced.
Shape with_rows_and_seq(const Tensor& t, std::int64_t seq_dim, std::int64_t rows, std::int64_t seq);

// out[o, b, k] = in[o, src_b, maps[b][k]] for k < out_len, with src_b = b (or 0 when `in` has one
// shared row); maps[b][k] = -1 leaves the token zero. One map per output row.
Tensor take_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps,
                   std::int64_t out_len);

// out[o, b, maps[b][k]] = in[o, b, k] into an existing tensor with the same dtype, rows and
// outer/inner dims (several inputs may fill one output in turn).
void put_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, Tensor& out);

// A zero tensor like `in` with `seq` tokens per row; then out[o, b, maps[b][k]] = in[o, b, k].
// Every destination must be in range and written at most once (a wrong map is an error, not a
// blur).
Tensor place_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, std::int64_t seq);

// Rows [begin, end) of the row dim (seq_dim - 1).
Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end);

// Rows [begin, end) of a batch's token keys (a shared [1,S] key stays shared) with the pass-through
// tensors unchanged. Document lengths are left to the caller.
Batch slice_token_rows(const Batch& batch, std::int64_t begin, std::int64_t end);

}  // namespace cplab
