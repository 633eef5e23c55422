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
  kPixels,
  kRestart,
  kPlanes,
  kFeatures
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

std::int64_t left_pad_slots(const Case& c, std::int64_t b) {
  if (c.packed() || c.left_pad == 0) return 0;
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(b) + c.seed) %
                                   static_cast<std::uint64_t>(c.left_pad + 1));
}

bool caller_padding(const Case& c, std::int64_t b, std::int64_t t) {
  return !caller_real(c, b, t) || t < left_pad_slots(c, b);
}

namespace {

// A document boundary inside BSHD row b at real offset u > 0 (rowpos=restart): about one in five.
bool row_boundary(const Case& c, std::int64_t b, std::int64_t u) {
  const std::uint64_t draw =
      mix(c.seed, kRestart, static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(u));
  return u > 0 && draw % 5 == 0;
}

std::int64_t bshd_position(const Case& c, std::int64_t b, std::int64_t t) {
  const std::int64_t pad = left_pad_slots(c, b);
  if (t < pad) return 1;
  const std::int64_t u = t - pad;
  switch (c.row_positions) {
    case RowPositions::arange:
      return u;
    case RowPositions::offset:
      // Distinct for every row of a microbatch, so that a row read for another shows.
      return u + (b + 1) * static_cast<std::int64_t>(1 + c.seed % 7);
    case RowPositions::restart: {
      std::int64_t start = u;
      while (start > 0 && !row_boundary(c, b, start)) --start;
      return u - start;
    }
  }
  return u;
}

}  // namespace

std::int64_t caller_position(const Case& c, std::int64_t b, std::int64_t t) {
  if (!c.packed()) return bshd_position(c, b, t);
  const DocSlot slot = doc_slot(c, b, t);
  if (slot.doc >= 0) return t - slot.start;
  // Row padding continues the positions of the slot before it (the last document's).
  if (slot.start == 0) return t;
  return caller_position(c, b, slot.start - 1) + (t - slot.start + 1);
}

std::int64_t token_id(const Case& c, std::int64_t b, std::int64_t t) {
  if (caller_padding(c, b, t)) return c.spec.pad_token_id;
  const std::uint64_t ub = static_cast<std::uint64_t>(b), ut = static_cast<std::uint64_t>(t);
  if (static_cast<int>(mix(c.seed, kPadContent, ub, ut) % 1000) < c.pad_content_permille)
    return c.spec.pad_token_id;
  return static_cast<std::int64_t>(mix(c.seed, kIds, ub, ut) % static_cast<std::uint64_t>(c.vocab));
}

std::int64_t token_label(const Case& c, std::int64_t b, std::int64_t t) {
  if (caller_padding(c, b, t)) return kIgnoreIndex;
  const std::uint64_t ub = static_cast<std::uint64_t>(b), ut = static_cast<std::uint64_t>(t);
  if (static_cast<int>(mix(c.seed, kIgnore, ub, ut) % 1000) < c.ignore_permille)
    return kIgnoreIndex;
  return static_cast<std::int64_t>(mix(c.seed, kLabels, ub, ut) %
                                   static_cast<std::uint64_t>(c.vocab));
}

bool token_valid(const Case& c, std::int64_t b, std::int64_t t) {
  if (caller_padding(c, b, t)) return false;
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

namespace {

// A key's values, built as i64 or f32 and stored in the dtype the case's key dtypes give it.
Tensor as_key(DType dtype, Shape shape, const std::vector<std::int64_t>& values) {
  Tensor t = Tensor::from<std::int64_t>(std::move(shape), values);
  return dtype == DType::i64 ? t : t.to(dtype);
}
Tensor as_key(DType dtype, Shape shape, const std::vector<float>& values) {
  Tensor t = Tensor::from<float>(std::move(shape), values);
  return dtype == DType::f32 ? t : t.to(dtype);
}
Tensor as_mask(DType dtype, Shape shape, const std::vector<bool>& values) {
  Tensor t = Tensor::from_bools(std::move(shape), values);
  return dtype == DType::b8 ? t : t.to(dtype);
}

TokenField extra_field(Tensor value, std::int64_t seq_dim, double pad) {
  TokenField field;
  field.value = std::move(value);
  field.seq_dim = seq_dim;
  field.pad_value = pad;
  return field;
}

// Every key's values of rows [first, first + count), row-major, before they become tensors.
struct RowValues {
  std::vector<std::int64_t> ids, labels, positions;
  std::vector<bool> valid, loss_mask, padding_mask;
  std::vector<float> embeds, extra, planes, features;
};

RowValues row_values(const Case& c, std::int64_t first, std::int64_t count) {
  const std::int64_t S = c.seq_len, H = c.dim;
  RowValues v;
  v.planes.resize(static_cast<std::size_t>(2 * count * S * H));
  for (std::int64_t b = first; b < first + count; ++b) {
    for (std::int64_t t = 0; t < S; ++t) {
      v.ids.push_back(token_id(c, b, t));
      v.labels.push_back(token_label(c, b, t));
      v.positions.push_back(caller_position(c, b, t));
      v.valid.push_back(token_valid(c, b, t));
      const std::uint64_t key = static_cast<std::uint64_t>(b * S + t);
      v.loss_mask.push_back(!caller_padding(c, b, t) &&
                            static_cast<int>(mix(c.seed, kLossMask, key, 0) % 1000) >=
                                c.invalid_permille);
      v.padding_mask.push_back(caller_padding(c, b, t));
      v.extra.push_back(static_cast<float>(mix(c.seed, kExtra, key, 0) % 64) / 8.0f);
      for (std::int64_t f = 0; f < H; ++f) {
        // Embeddings are f32 whatever the case's dtype: the code is exact there (narrow keys
        // round it to bf16, the same on every side).
        v.embeds.push_back(static_cast<float>(1 + f + H * (t + S * b) + seed_shift(c, S)));
        v.features.push_back(static_cast<float>(mix(c.seed, kFeatures, key, f) % 128) / 4.0f);
        for (std::int64_t p = 0; p < 2; ++p) {
          const std::int64_t at = ((p * count + (b - first)) * S + t) * H + f;
          v.planes[static_cast<std::size_t>(at)] =
              static_cast<float>(mix(c.seed, kPlanes, key, 2 * f + p) % 128) / 4.0f;
        }
      }
    }
  }
  return v;
}

// The token-aligned keys the case carries, in the dtypes its key dtypes give them.
void add_token_keys(const Case& c, std::int64_t count, const RowValues& v, Batch& batch) {
  const std::int64_t S = c.seq_len, H = c.dim;
  const bool narrow = c.key_dtypes == KeyDTypes::narrow;
  const DType int_key = narrow ? DType::i32 : DType::i64;
  const DType float_key = narrow ? DType::bf16 : DType::f32;
  if (c.primary == Primary::ids) {
    batch.add(keys::input_ids, as_key(int_key, {count, S}, v.ids));
  } else {
    batch.add(keys::inputs_embeds, as_key(float_key, {count, S, H}, v.embeds));
  }
  batch.add(keys::labels, as_key(int_key, {count, S}, v.labels));
  batch.add(keys::valid, as_mask(narrow ? DType::u8 : DType::b8, {count, S}, v.valid));
  if (c.loss_mask)
    batch.add(keys::loss_mask, as_mask(narrow ? DType::f32 : DType::b8, {count, S}, v.loss_mask));
  if (c.padding_mask) batch.add(keys::padding_mask, Tensor::from_bools({count, S}, v.padding_mask));
  if (c.extra_key)
    batch.tokens[kExtraKey] = extra_field(as_key(float_key, {count, S}, v.extra), 1, kExtraPad);
  if (c.extra_planes) {
    batch.tokens[kPlanesKey] =
        extra_field(as_key(float_key, {2, count, S, H}, v.planes), 2, kPlanesPad);
  }
  if (c.extra_features) {
    batch.tokens[kFeaturesKey] =
        extra_field(as_key(float_key, {count, S, H}, v.features), 1, kFeaturesPad);
  }
}

void add_position_ids(const Case& c, std::int64_t count, const std::vector<std::int64_t>& positions,
                      Batch& batch) {
  const std::int64_t S = c.seq_len;
  const DType int_key = c.key_dtypes == KeyDTypes::narrow ? DType::i32 : DType::i64;
  switch (c.positions) {
    case PositionKind::none:
      break;
    case PositionKind::per_row:
      batch.add(keys::position_ids, as_key(int_key, {count, S}, positions));
      break;
    case PositionKind::shared: {
      // One row for the whole batch (every microbatch's too): row 0's positions.
      std::vector<std::int64_t> shared;
      for (std::int64_t t = 0; t < S; ++t) shared.push_back(caller_position(c, 0, t));
      batch.add(keys::position_ids, as_key(int_key, {1, S}, shared));
      break;
    }
    case PositionKind::mrope: {
      // Three planes (temporal, height, width) that differ, so a plane mix-up shows.
      std::vector<std::int64_t> planes3;
      for (std::int64_t p = 0; p < 3; ++p) {
        for (std::int64_t v : positions) planes3.push_back(v + 1000 * p);
      }
      batch.add(keys::position_ids, as_key(int_key, {3, count, S}, planes3));
      break;
    }
  }
}

// A packed case's document lengths, per row, and the slots each occupies where the caller pads.
void add_document_lengths(const Case& c, std::int64_t first, std::int64_t count, Batch& batch) {
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

}  // namespace

Batch make_batch_rows(const Case& c, std::int64_t first, std::int64_t count) {
  const RowValues values = row_values(c, first, count);
  Batch batch;
  add_token_keys(c, count, values, batch);
  add_position_ids(c, count, values.positions, batch);
  batch.passthrough[kPassthroughKey] = float_tensor(c.seed, kPixels, {2, 3, 3}, 1.0f);
  if (c.packed()) add_document_lengths(c, first, count, batch);
  return batch;
}

}  // namespace cplab::properties
