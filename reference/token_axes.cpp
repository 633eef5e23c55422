#include "reference/token_axes.hpp"

#include <cstring>

namespace cplab::reference::tokens {

TokenAxes token_axes(const Tensor& t, std::int64_t seq_dim, const char* what) {
  CPLAB_CHECK(seq_dim >= 1 && seq_dim < t.dim(),
              "{} {}: seq dim {} needs a row dim before it (1 <= seq dim < {})", what,
              tensor_brief(t), seq_dim, t.dim());
  TokenAxes axes;
  for (std::int64_t d = 0; d < seq_dim - 1; ++d) axes.outer *= t.size(d);
  axes.rows = t.size(seq_dim - 1);
  axes.seq = t.size(seq_dim);
  for (std::int64_t d = seq_dim + 1; d < t.dim(); ++d) axes.inner *= t.size(d);
  axes.elem = dtype_size(t.dtype());
  return axes;
}

Shape with_rows_and_seq(const Tensor& t, std::int64_t seq_dim, std::int64_t rows,
                        std::int64_t seq) {
  Shape shape = t.shape();
  shape[static_cast<std::size_t>(seq_dim - 1)] = rows;
  shape[static_cast<std::size_t>(seq_dim)] = seq;
  return shape;
}

Tensor take_tokens(const Tensor& in, std::int64_t seq_dim,
                   const std::vector<std::vector<std::int64_t>>& maps, std::int64_t out_len) {
  const TokenAxes src = token_axes(in, seq_dim, "token tensor");
  const auto rows = static_cast<std::int64_t>(maps.size());
  CPLAB_CHECK(src.rows == rows || src.rows == 1,
              "{} has {} rows on dim {}; expected B={} (or 1 shared row)", tensor_brief(in),
              src.rows, seq_dim - 1, rows);
  Tensor out(in.dtype(), with_rows_and_seq(in, seq_dim, rows, out_len));
  const TokenAxes dst = token_axes(out, seq_dim, "token tensor");
  const std::size_t bytes = src.token_bytes();
  if (bytes == 0) return out;  // no elements to move (and memcpy must not see null pointers)
  for (std::int64_t o = 0; o < src.outer; ++o) {
    for (std::int64_t b = 0; b < rows; ++b) {
      const auto& map = maps[b];
      CPLAB_CHECK(static_cast<std::int64_t>(map.size()) == out_len,
                  "row {} map has {} entries for {} tokens", b, map.size(), out_len);
      const std::int64_t src_row = src.rows == 1 ? 0 : b;
      for (std::int64_t k = 0; k < out_len; ++k) {
        if (map[k] < 0) continue;
        CPLAB_CHECK(map[k] < src.seq, "row {} token {} maps to {}, beyond the {} tokens of {}", b,
                    k, map[k], src.seq, tensor_brief(in));
        std::memcpy(out.raw() + dst.flat(o, b, k) * dst.elem,
                    in.raw() + src.flat(o, src_row, map[k]) * src.elem, bytes);
      }
    }
  }
  return out;
}

void put_tokens(const Tensor& in, std::int64_t seq_dim,
                const std::vector<std::vector<std::int64_t>>& maps, Tensor& out) {
  const TokenAxes src = token_axes(in, seq_dim, "token tensor");
  const TokenAxes dst = token_axes(out, seq_dim, "token tensor");
  CPLAB_CHECK(in.dtype() == out.dtype() && src.outer == dst.outer && src.inner == dst.inner &&
                  src.rows == dst.rows,
              "cannot place {} into {}: dtype or non-token dims differ", tensor_brief(in),
              tensor_brief(out));
  CPLAB_CHECK(static_cast<std::int64_t>(maps.size()) == src.rows, "{} row maps for {} rows",
              maps.size(), src.rows);
  if (src.token_bytes() == 0) return;
  for (std::int64_t o = 0; o < src.outer; ++o) {
    for (std::int64_t b = 0; b < src.rows; ++b) {
      CPLAB_CHECK(static_cast<std::int64_t>(maps[b].size()) == src.seq,
                  "row {} map has {} entries for {} tokens", b, maps[b].size(), src.seq);
      for (std::int64_t k = 0; k < src.seq; ++k) {
        const std::int64_t g = maps[b][k];
        CPLAB_CHECK(g >= 0 && g < dst.seq, "row {} token {} maps to {}, outside [0, {})", b, k, g,
                    dst.seq);
        std::memcpy(out.raw() + dst.flat(o, b, g) * dst.elem,
                    in.raw() + src.flat(o, b, k) * src.elem, src.token_bytes());
      }
    }
  }
}

Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end) {
  const TokenAxes axes = token_axes(t, seq_dim, "token tensor");
  CPLAB_CHECK(0 <= begin && begin <= end && end <= axes.rows, "rows [{}, {}) of {}", begin, end,
              tensor_brief(t));
  Tensor out(t.dtype(), with_rows_and_seq(t, seq_dim, end - begin, axes.seq));
  const std::size_t row_bytes = static_cast<std::size_t>(axes.seq) * axes.token_bytes();
  const std::size_t chunk = static_cast<std::size_t>(end - begin) * row_bytes;
  if (chunk == 0) return out;
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    std::memcpy(out.raw() + static_cast<std::size_t>(o) * chunk,
                t.raw() + axes.flat(o, begin, 0) * axes.elem, chunk);
  }
  return out;
}

void scale_gradient(Tensor& t, double factor) {
  const DType dtype = t.dtype();
  CPLAB_CHECK(dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16,
              "gradients are f32, bf16 or f16; got {}", tensor_brief(t));
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * factor);
}

}  // namespace cplab::reference::tokens
