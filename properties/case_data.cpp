#include "properties/case_data.hpp"

#include <fmt/format.h>

#include <cmath>

namespace cplab::properties {

namespace {

// Streams of mix(): one per kind of value, so that changing one never shifts another.
enum Stream : std::uint64_t {
  kIds = 1,
  kPadContent,
  kLabels,
  kIgnore,
  kValid,
  kLossMask,
  kExtra,
  kPixels
};

// Largest code each dtype holds exactly (0: no limit that a case reaches).
std::int64_t dtype_modulus(DType t) {
  switch (t) {
    case DType::bf16:
      return 256;
    case DType::f16:
      return 2048;
    case DType::u8:
      return 256;
    case DType::b8:
      return 2;
    default:
      return 0;
  }
}

std::int64_t seed_shift(const Case& c, std::int64_t len) {
  return static_cast<std::int64_t>(c.seed % 61) * c.dim * len * c.rows;
}

// Slot t of packed row b: the document holding it and where it starts, or (-1, end of documents).
struct DocSlot {
  std::int64_t doc = -1, start = 0, real = 0;
};
DocSlot doc_slot(const Case& c, std::int64_t b, std::int64_t t) {
  std::int64_t start = 0;
  const auto& row = c.docs[static_cast<std::size_t>(b)];
  for (std::size_t i = 0; i < row.size(); ++i) {
    const std::int64_t occupied = row[i].real + row[i].extra;
    if (t < start + occupied) return {static_cast<std::int64_t>(i), start, row[i].real};
    start += occupied;
  }
  return {-1, start, 0};
}

}  // namespace

std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t x = seed;
  for (std::uint64_t v : {a, b, c}) {
    x += 0x9e3779b97f4a7c15ull + v;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
  }
  return x;
}

bool caller_real(const Case& c, std::int64_t b, std::int64_t t) {
  if (!c.packed()) return true;
  const DocSlot slot = doc_slot(c, b, t);
  return slot.doc >= 0 && t - slot.start < slot.real;
}

std::int64_t caller_position(const Case& c, std::int64_t b, std::int64_t t) {
  if (!c.packed()) return t;
  const DocSlot slot = doc_slot(c, b, t);
  if (slot.doc >= 0) return t - slot.start;
  // Row padding continues the positions of the slot before it (the last document's).
  if (slot.start == 0) return t;
  return caller_position(c, b, slot.start - 1) + (t - slot.start + 1);
}

std::int64_t token_id(const Case& c, std::int64_t b, std::int64_t t) {
  if (!caller_real(c, b, t)) return c.spec.pad_token_id;
  const std::uint64_t ub = static_cast<std::uint64_t>(b), ut = static_cast<std::uint64_t>(t);
  if (static_cast<int>(mix(c.seed, kPadContent, ub, ut) % 1000) < c.pad_content_permille)
    return c.spec.pad_token_id;
  return static_cast<std::int64_t>(mix(c.seed, kIds, ub, ut) % static_cast<std::uint64_t>(c.vocab));
}

std::int64_t token_label(const Case& c, std::int64_t b, std::int64_t t) {
  if (!caller_real(c, b, t)) return kIgnoreIndex;
  const std::uint64_t ub = static_cast<std::uint64_t>(b), ut = static_cast<std::uint64_t>(t);
  if (static_cast<int>(mix(c.seed, kIgnore, ub, ut) % 1000) < c.ignore_permille)
    return kIgnoreIndex;
  return static_cast<std::int64_t>(mix(c.seed, kLabels, ub, ut) %
                                   static_cast<std::uint64_t>(c.vocab));
}

bool token_valid(const Case& c, std::int64_t b, std::int64_t t) {
  if (!caller_real(c, b, t)) return false;
  const std::uint64_t ub = static_cast<std::uint64_t>(b), ut = static_cast<std::uint64_t>(t);
  return static_cast<int>(mix(c.seed, kValid, ub, ut) % 1000) >= c.invalid_permille;
}

double locator(const Case& c, std::int64_t len, std::int64_t b, std::int64_t t, std::int64_t f) {
  const std::int64_t code = 1 + f + c.dim * (t + len * b) + seed_shift(c, len);
  const std::int64_t modulus = dtype_modulus(c.dtype);
  return static_cast<double>(modulus ? code % modulus : code);
}

std::optional<TokenAt> decode_locator(const Case& c, std::int64_t len, double value) {
  if (dtype_modulus(c.dtype) != 0 || len <= 0 || value != std::floor(value)) return std::nullopt;
  const std::int64_t v = static_cast<std::int64_t>(value) - 1 - seed_shift(c, len);
  if (v < 0) return std::nullopt;
  const TokenAt at{v / c.dim / len, (v / c.dim) % len, v % c.dim};
  if (at.row >= c.rows) return std::nullopt;
  return at;
}

std::string describe_value(const Case& c, std::int64_t len, double value) {
  const auto at = decode_locator(c, len, value);
  if (!at) return {};
  return fmt::format("the value of token (b={}, t={}, f={})", at->row, at->pos, at->feature);
}

Tensor token_tensor(const Case& c, std::int64_t first_row, std::int64_t rows, std::int64_t len) {
  Tensor t(c.dtype, {rows, len, c.dim});
  std::int64_t flat = 0;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < len; ++s) {
      for (std::int64_t f = 0; f < c.dim; ++f) t.set(flat++, locator(c, len, first_row + b, s, f));
    }
  }
  return t;
}

Tensor float_tensor(std::uint64_t seed, std::uint64_t stream, const Shape& shape, float scale) {
  Tensor t(DType::f32, shape);
  auto values = t.data<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double unit =
        static_cast<double>(mix(seed, stream, i, 0x5eed) >> 11) * 0x1.0p-53;  // [0, 1)
    values[i] = static_cast<float>((2.0 * unit - 1.0) * scale);
  }
  return t;
}

Batch make_batch(const Case& c) { return make_batch_rows(c, 0, c.rows); }

Batch make_batch_rows(const Case& c, std::int64_t first, std::int64_t count) {
  const std::int64_t S = c.seq_len, H = c.dim;
  std::vector<std::int64_t> ids, labels, positions;
  std::vector<bool> valid, loss_mask, padding_mask;
  std::vector<float> embeds, extra;
  for (std::int64_t b = first; b < first + count; ++b) {
    for (std::int64_t t = 0; t < S; ++t) {
      ids.push_back(token_id(c, b, t));
      labels.push_back(token_label(c, b, t));
      positions.push_back(caller_position(c, b, t));
      valid.push_back(token_valid(c, b, t));
      const std::uint64_t key = static_cast<std::uint64_t>(b * S + t);
      loss_mask.push_back(caller_real(c, b, t) && static_cast<int>(mix(c.seed, kLossMask, key, 0) %
                                                                   1000) >= c.invalid_permille);
      padding_mask.push_back(!caller_real(c, b, t));
      extra.push_back(static_cast<float>(mix(c.seed, kExtra, key, 0) % 64) / 8.0f);
      for (std::int64_t f = 0; f < H; ++f) {
        // Embeddings are f32 whatever the case's dtype: the code is exact there.
        embeds.push_back(static_cast<float>(1 + f + H * (t + S * b) + seed_shift(c, S)));
      }
    }
  }
  Batch batch;
  if (c.primary == Primary::ids) {
    batch.add(keys::input_ids, Tensor::from<std::int64_t>({count, S}, ids));
  } else {
    batch.add(keys::inputs_embeds, Tensor::from<float>({count, S, H}, embeds));
  }
  batch.add(keys::labels, Tensor::from<std::int64_t>({count, S}, labels));
  batch.add(keys::valid, Tensor::from_bools({count, S}, valid));
  if (c.loss_mask) batch.add(keys::loss_mask, Tensor::from_bools({count, S}, loss_mask));
  if (c.padding_mask) batch.add(keys::padding_mask, Tensor::from_bools({count, S}, padding_mask));
  if (c.extra_key) {
    TokenField field;
    field.value = Tensor::from<float>({count, S}, extra);
    field.pad_value = kExtraPad;
    batch.tokens[kExtraKey] = std::move(field);
  }
  switch (c.positions) {
    case PositionKind::none:
      break;
    case PositionKind::per_row:
      batch.add(keys::position_ids, Tensor::from<std::int64_t>({count, S}, positions));
      break;
    case PositionKind::shared:
      batch.add(keys::position_ids,
                Tensor::from<std::int64_t>(
                    {1, S}, std::vector<std::int64_t>(positions.begin(), positions.begin() + S)));
      break;
    case PositionKind::mrope: {
      // Three planes (temporal, height, width) that differ, so a plane mix-up shows.
      std::vector<std::int64_t> planes;
      for (std::int64_t p = 0; p < 3; ++p) {
        for (std::int64_t v : positions) planes.push_back(v + 1000 * p);
      }
      batch.add(keys::position_ids, Tensor::from<std::int64_t>({3, count, S}, planes));
      break;
    }
  }
  batch.passthrough[kPassthroughKey] = float_tensor(c.seed, kPixels, {2, 3, 3}, 1.0f);
  if (c.packed()) {
    bool caller_pads = false;
    for (std::int64_t b = first; b < first + count; ++b) {
      std::vector<std::int64_t> lens, padded;
      for (const Document& d : c.docs[static_cast<std::size_t>(b)]) {
        lens.push_back(d.real);
        padded.push_back(d.real + d.extra);
        caller_pads = caller_pads || d.extra > 0;
      }
      batch.seq_lens.push_back(lens);
      batch.seq_lens_padded.push_back(padded);
    }
    // Without the caller's own padding, leave seq_lens_padded out: "equal to seq_lens" is a path
    // too.
    if (!caller_pads) batch.seq_lens_padded.clear();
  }
  return batch;
}

}  // namespace cplab::properties
