#include "sim/token_moves.hpp"

#include <cstring>

#include "reference/types/error.hpp"

namespace cplab::sim {
namespace {

Shape with_rows_and_seq(const Tensor& t, std::int64_t seq_dim, std::int64_t rows,
                        std::int64_t seq) {
  Shape shape = t.shape();
  shape[static_cast<std::size_t>(seq_dim - 1)] = rows;
  shape[static_cast<std::size_t>(seq_dim)] = seq;
  return shape;
}

}  // namespace

TokenAxes token_axes(const Tensor& t, std::int64_t seq_dim, const char* what) {
  CPLAB_CHECK(seq_dim >= 1 && seq_dim < t.dim(),
              "{}: {} has seq dim {}; it needs a row dim before it (1 <= seq dim < {})", what,
              tensor_brief(t), seq_dim, t.dim());
  TokenAxes axes;
  for (std::int64_t d = 0; d < seq_dim - 1; ++d) axes.outer *= t.size(d);
  axes.rows = t.size(seq_dim - 1);
  axes.seq = t.size(seq_dim);
  for (std::int64_t d = seq_dim + 1; d < t.dim(); ++d) axes.inner *= t.size(d);
  axes.elem = dtype_size(t.dtype());
  return axes;
}

Tensor take_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps,
                   std::int64_t out_len) {
  const TokenAxes src = token_axes(in, seq_dim, "take_tokens");
  const auto rows = static_cast<std::int64_t>(maps.size());
  CPLAB_CHECK(src.rows == rows || src.rows == 1, "{} has {} rows; expected {} (or one shared row)",
              tensor_brief(in), src.rows, rows);
  Tensor out(in.dtype(), with_rows_and_seq(in, seq_dim, rows, out_len));
  const TokenAxes dst = token_axes(out, seq_dim, "take_tokens");
  if (src.token_bytes() == 0) return out;
  for (std::int64_t b = 0; b < rows; ++b) {
    CPLAB_CHECK(static_cast<std::int64_t>(maps[b].size()) == out_len,
                "row {} map has {} entries for {} tokens", b, maps[b].size(), out_len);
    for (std::int64_t k = 0; k < out_len; ++k) {
      const std::int64_t from = maps[b][k];
      if (from < 0) continue;
      CPLAB_CHECK(from < src.seq,
                  "row {} token {} comes from position {}, beyond the {} tokens of {}", b, k, from,
                  src.seq, tensor_brief(in));
      for (std::int64_t o = 0; o < src.outer; ++o) {
        std::memcpy(out.raw() + dst.token(o, b, k) * dst.token_bytes(),
                    in.raw() + src.token(o, src.rows == 1 ? 0 : b, from) * src.token_bytes(),
                    src.token_bytes());
      }
    }
  }
  return out;
}

Tensor place_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, std::int64_t seq) {
  const TokenAxes src = token_axes(in, seq_dim, "place_tokens");
  CPLAB_CHECK(static_cast<std::int64_t>(maps.size()) == src.rows, "{} row maps for {} rows",
              maps.size(), src.rows);
  Tensor out(in.dtype(), with_rows_and_seq(in, seq_dim, src.rows, seq));
  const TokenAxes dst = token_axes(out, seq_dim, "place_tokens");
  for (std::int64_t b = 0; b < src.rows; ++b) {
    CPLAB_CHECK(static_cast<std::int64_t>(maps[b].size()) == src.seq,
                "row {} map has {} entries for {} tokens", b, maps[b].size(), src.seq);
    std::vector<std::uint8_t> written(static_cast<std::size_t>(seq), 0);
    for (std::int64_t k = 0; k < src.seq; ++k) {
      const std::int64_t to = maps[b][k];
      CPLAB_CHECK(to >= 0 && to < seq && !written[to], "row {} token {} goes to slot {}: {}", b, k,
                  to, to >= 0 && to < seq ? "already written" : "outside the stream");
      written[to] = 1;
      if (src.token_bytes() == 0) continue;
      for (std::int64_t o = 0; o < src.outer; ++o) {
        std::memcpy(out.raw() + dst.token(o, b, to) * dst.token_bytes(),
                    in.raw() + src.token(o, b, k) * src.token_bytes(), src.token_bytes());
      }
    }
  }
  return out;
}

Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end) {
  const TokenAxes axes = token_axes(t, seq_dim, "slice_rows");
  CPLAB_CHECK(0 <= begin && begin <= end && end <= axes.rows, "rows [{}, {}) of {}", begin, end,
              tensor_brief(t));
  Tensor out(t.dtype(), with_rows_and_seq(t, seq_dim, end - begin, axes.seq));
  const std::size_t block = static_cast<std::size_t>((end - begin) * axes.seq) * axes.token_bytes();
  if (block == 0) return out;
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    std::memcpy(out.raw() + static_cast<std::size_t>(o) * block,
                t.raw() + axes.token(o, begin, 0) * axes.token_bytes(), block);
  }
  return out;
}

}  // namespace cplab::sim
