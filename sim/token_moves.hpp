#pragma once
// Moving whole tokens of a token-aligned tensor [outer..., rows, seq, inner...] (the row dim just
// before the seq dim): select them by per-row maps, or place them. Byte copies, any dtype.
#include <cstdint>
#include <vector>

#include "reference/types/tensor.hpp"

namespace cplab::sim {

struct TokenAxes {
  std::int64_t outer = 1;  // product of the dims before the row dim
  std::int64_t rows = 0;
  std::int64_t seq = 0;
  std::int64_t inner = 1;  // product of the dims after the seq dim
  std::size_t elem = 0;

  std::size_t token_bytes() const { return static_cast<std::size_t>(inner) * elem; }
  std::int64_t token(std::int64_t o, std::int64_t b, std::int64_t s) const {
    return (o * rows + b) * seq + s;
  }
};

using RowMaps = std::vector<std::vector<std::int64_t>>;

// Reads the axes of t; `what` names the caller in the error when seq_dim has no row dim before it.
TokenAxes token_axes(const Tensor& t, std::int64_t seq_dim, const char* what);

// out[o, b, k] = in[o, b (or 0 when `in` has one shared row), maps[b][k]]; -1 leaves a zero token.
Tensor take_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps,
                   std::int64_t out_len);

// A zero tensor like `in` with `seq` tokens per row; then out[o, b, maps[b][k]] = in[o, b, k].
// Every destination must be in range and written at most once (a wrong map is an error, not a
// blur).
Tensor place_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, std::int64_t seq);

// Rows [begin, end) of the row dim.
Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end);

}  // namespace cplab::sim
