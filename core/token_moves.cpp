#include "core/token_moves.hpp"

#include <cstring>

#include "core/error.hpp"
#include "core/map_checks.hpp"

namespace cplab {

namespace {

// dst[to ? (*to)[k] : k] = src[from ? (*from)[k] : k] for the k < count tokens of one row; a
// source of -1 leaves a zero token (the maps are checked before). Small tokens (ids, labels, flags)
// get copies of a fixed size instead of a memcpy call each.
template <std::size_t kBytes>
void move_fixed(std::byte* dst, const std::byte* src, std::size_t bytes,
                const std::vector<std::int64_t>* from, const std::vector<std::int64_t>* to,
                std::size_t count) {
  const std::size_t size = kBytes == 0 ? bytes : kBytes;
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t f = from ? (*from)[k] : static_cast<std::int64_t>(k);
    const std::int64_t t = to ? (*to)[k] : static_cast<std::int64_t>(k);
    if (f < 0) {
      std::memset(dst + static_cast<std::size_t>(t) * size, 0, size);
      continue;
    }
    std::memcpy(dst + static_cast<std::size_t>(t) * size, src + static_cast<std::size_t>(f) * size,
                size);
  }
}

// Large tokens (hidden states): runs of consecutive sources to consecutive destinations move
// with one memcpy each (a layout's chunks are such runs), so the copy streams as one memcpy of
// the same bytes does instead of restarting at every token.
void move_runs(std::byte* dst, const std::byte* src, std::size_t bytes,
               const std::vector<std::int64_t>* from, const std::vector<std::int64_t>* to,
               std::size_t count) {
  auto source = [&](std::size_t k) { return from ? (*from)[k] : static_cast<std::int64_t>(k); };
  auto target = [&](std::size_t k) { return to ? (*to)[k] : static_cast<std::int64_t>(k); };
  for (std::size_t k = 0; k < count;) {
    const std::int64_t f = source(k), t = target(k);
    std::size_t n = 1;
    if (f < 0) {
      while (k + n < count && source(k + n) < 0 &&
             target(k + n) == t + static_cast<std::int64_t>(n))
        ++n;
      std::memset(dst + static_cast<std::size_t>(t) * bytes, 0, n * bytes);
    } else {
      while (k + n < count && source(k + n) == f + static_cast<std::int64_t>(n) &&
             target(k + n) == t + static_cast<std::int64_t>(n))
        ++n;
      std::memcpy(dst + static_cast<std::size_t>(t) * bytes,
                  src + static_cast<std::size_t>(f) * bytes, n * bytes);
    }
    k += n;
  }
}

// dst[t] = src[inverse[t]] for the t < count slots that have a source (-1: the slot keeps what it
// holds), in destination order: a scatter to scattered slots (a strided gather puts each rank's
// tokens C slots apart) becomes sequential writes from a few sequential read streams, and each
// destination line is written whole while it is in cache (no refetch of a partly written line).
void move_into_slots(std::byte* dst, const std::byte* src, std::size_t bytes,
                     const std::vector<std::int64_t>& inverse, std::size_t count) {
  for (std::size_t t = 0; t < count;) {
    const std::int64_t f = inverse[t];
    std::size_t n = 1;
    if (f < 0) {
      ++t;
      continue;
    }
    while (t + n < count && inverse[t + n] == f + static_cast<std::int64_t>(n)) ++n;
    std::memcpy(dst + t * bytes, src + static_cast<std::size_t>(f) * bytes, n * bytes);
    t += n;
  }
}

void move_tokens(std::byte* dst, const std::byte* src, std::size_t bytes,
                 const std::vector<std::int64_t>* from, const std::vector<std::int64_t>* to,
                 std::size_t count) {
  switch (bytes) {
    case 1:
      return move_fixed<1>(dst, src, bytes, from, to, count);
    case 2:
      return move_fixed<2>(dst, src, bytes, from, to, count);
    case 4:
      return move_fixed<4>(dst, src, bytes, from, to, count);
    case 8:
      return move_fixed<8>(dst, src, bytes, from, to, count);
    default:
      if (bytes >= 64) return move_runs(dst, src, bytes, from, to, count);
      return move_fixed<0>(dst, src, bytes, from, to, count);
  }
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

Shape with_rows_and_seq(const Tensor& t, std::int64_t seq_dim, std::int64_t rows,
                        std::int64_t seq) {
  Shape shape = t.shape();
  shape[static_cast<std::size_t>(seq_dim - 1)] = rows;
  shape[static_cast<std::size_t>(seq_dim)] = seq;
  return shape;
}

Tensor take_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps,
                   std::int64_t out_len) {
  const TokenAxes src = token_axes(in, seq_dim, "take_tokens");
  const auto rows = static_cast<std::int64_t>(maps.size());
  CPLAB_CHECK(src.rows == rows || src.rows == 1,
              "take_tokens: {} has {} rows on dim {}; expected B={} (or one shared row)",
              tensor_brief(in), src.rows, seq_dim - 1, rows);
  // The maps are checked whole before any byte moves; every output token is then written (a hole
  // as zeros), so the output needs no zero fill first.
  for (std::int64_t b = 0; b < rows; ++b) {
    const auto& map = maps[b];
    CPLAB_CHECK(static_cast<std::int64_t>(map.size()) == out_len,
                "take_tokens: row {} map has {} entries for {} tokens", b, map.size(), out_len);
    const MapFault fault = find_map_fault(map, -1, src.seq, false);
    CPLAB_CHECK(!fault, "take_tokens: row {} map: {} (a position of the {} tokens of {}, or -1)", b,
                describe_map_fault(fault, -1, src.seq), src.seq, tensor_brief(in));
  }
  Tensor out(in.dtype(), with_rows_and_seq(in, seq_dim, rows, out_len), Uninitialized{});
  const TokenAxes dst = token_axes(out, seq_dim, "take_tokens");
  const std::size_t bytes = src.token_bytes();
  if (bytes == 0) return out;  // no elements to move (and memcpy must not see null pointers)
  for (std::int64_t b = 0; b < rows; ++b) {
    const std::int64_t src_row = src.rows == 1 ? 0 : b;
    for (std::int64_t o = 0; o < src.outer; ++o) {
      move_tokens(out.raw() + dst.token(o, b, 0) * bytes,
                  in.raw() + src.token(o, src_row, 0) * bytes, bytes, &maps[b], nullptr,
                  static_cast<std::size_t>(out_len));
    }
  }
  return out;
}

void put_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, Tensor& out) {
  const TokenAxes src = token_axes(in, seq_dim, "put_tokens");
  const TokenAxes dst = token_axes(out, seq_dim, "put_tokens");
  CPLAB_CHECK(in.dtype() == out.dtype() && src.outer == dst.outer && src.inner == dst.inner &&
                  src.rows == dst.rows,
              "put_tokens: cannot place {} into {}: dtype or non-token dims differ",
              tensor_brief(in), tensor_brief(out));
  CPLAB_CHECK(static_cast<std::int64_t>(maps.size()) == src.rows,
              "put_tokens: {} row maps for {} rows", maps.size(), src.rows);
  const std::size_t bytes = src.token_bytes();
  if (bytes == 0) return;
  // Large tokens filling most of the destination move in destination order, by the inverse map
  // (the later of two tokens sent to one slot wins, as in source order).
  const bool by_slot = bytes >= 64 && 2 * src.seq >= dst.seq;
  std::vector<std::int64_t> inverse;
  for (std::int64_t b = 0; b < src.rows; ++b) {
    CPLAB_CHECK(static_cast<std::int64_t>(maps[b].size()) == src.seq,
                "put_tokens: row {} map has {} entries for {} tokens", b, maps[b].size(), src.seq);
    const MapFault fault = find_map_fault(maps[b], 0, dst.seq, false);
    CPLAB_CHECK(!fault, "put_tokens: row {} map: {} (a slot of {})", b,
                describe_map_fault(fault, 0, dst.seq), tensor_brief(out));
    if (by_slot) {
      inverse.assign(static_cast<std::size_t>(dst.seq), -1);
      for (std::int64_t k = 0; k < src.seq; ++k) inverse[static_cast<std::size_t>(maps[b][k])] = k;
    }
    for (std::int64_t o = 0; o < src.outer; ++o) {
      std::byte* to = out.raw() + dst.token(o, b, 0) * bytes;
      const std::byte* from = in.raw() + src.token(o, b, 0) * bytes;
      if (by_slot) {
        move_into_slots(to, from, bytes, inverse, static_cast<std::size_t>(dst.seq));
      } else {
        move_tokens(to, from, bytes, nullptr, &maps[b], static_cast<std::size_t>(src.seq));
      }
    }
  }
}

Tensor place_tokens(const Tensor& in, std::int64_t seq_dim, const RowMaps& maps, std::int64_t seq) {
  const TokenAxes src = token_axes(in, seq_dim, "place_tokens");
  CPLAB_CHECK(static_cast<std::int64_t>(maps.size()) == src.rows,
              "place_tokens: {} row maps for {} rows", maps.size(), src.rows);
  // The maps are checked whole (sizes, range, each slot once) before any byte moves.
  for (std::int64_t b = 0; b < src.rows; ++b) {
    CPLAB_CHECK(static_cast<std::int64_t>(maps[b].size()) == src.seq,
                "place_tokens: row {} map has {} entries for {} tokens", b, maps[b].size(),
                src.seq);
    const MapFault fault = find_map_fault(maps[b], 0, seq, true);
    CPLAB_CHECK(!fault, "place_tokens: row {} map: {} (each slot of the {} once)", b,
                describe_map_fault(fault, 0, seq), seq);
  }
  // As many distinct slots written as there are: every byte is overwritten, no zero fill needed.
  const Shape shape = with_rows_and_seq(in, seq_dim, src.rows, seq);
  Tensor out =
      src.seq == seq ? Tensor(in.dtype(), shape, Uninitialized{}) : Tensor(in.dtype(), shape);
  put_tokens(in, seq_dim, maps, out);
  return out;
}

Tensor slice_rows(const Tensor& t, std::int64_t seq_dim, std::int64_t begin, std::int64_t end) {
  const TokenAxes axes = token_axes(t, seq_dim, "slice_rows");
  CPLAB_CHECK(0 <= begin && begin <= end && end <= axes.rows, "slice_rows: rows [{}, {}) of {}",
              begin, end, tensor_brief(t));
  Tensor out(t.dtype(), with_rows_and_seq(t, seq_dim, end - begin, axes.seq));
  const std::size_t block = static_cast<std::size_t>((end - begin) * axes.seq) * axes.token_bytes();
  if (block == 0) return out;
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    std::memcpy(out.raw() + static_cast<std::size_t>(o) * block,
                t.raw() + axes.token(o, begin, 0) * axes.token_bytes(), block);
  }
  return out;
}

Batch slice_token_rows(const Batch& batch, std::int64_t begin, std::int64_t end) {
  Batch part;
  part.passthrough = batch.passthrough;
  const std::int64_t rows = batch.rows();
  for (const auto& [name, field] : batch.tokens) {
    TokenField sliced = field;
    if (field.value.size(field.seq_dim - 1) == rows)
      sliced.value = slice_rows(field.value, field.seq_dim, begin, end);
    part.tokens[name] = std::move(sliced);
  }
  return part;
}

}  // namespace cplab
