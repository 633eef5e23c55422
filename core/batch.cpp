#include "core/batch.hpp"

#include <fmt/ranges.h>

#include <numeric>
#include <utility>

#include "core/limits.hpp"
#include "core/standard_keys.hpp"

namespace cplab {

TokenField default_token_field(const std::string& name, Tensor value) {
  TokenField field;
  // mRoPE position ids are [3,B,S]: the row is dim 1 and the sequence dim 2.
  field.seq_dim = (name == keys::position_ids && value.dim() == 3) ? 2 : 1;
  if (name == keys::input_ids) {
    field.rule = PadRule::pad_token;
  } else if (name == keys::position_ids) {
    field.rule = PadRule::continue_positions;
  } else if (name == keys::labels) {
    field.pad_value = static_cast<double>(kIgnoreIndex);
  } else if (name == keys::padding_mask) {
    field.pad_value = 1.0;  // true = pad
  }
  // inputs_embeds, loss_mask, valid and extra keys: constant 0 (embeddings 0, masks off).
  field.value = std::move(value);
  return field;
}

const Tensor& Batch::at(const std::string& name) const {
  auto it = tokens.find(name);
  if (it == tokens.end()) {
    std::vector<std::string> present;
    for (const auto& [key, field] : tokens) present.push_back(key);
    CPLAB_FAIL("batch has no token key '{}'; it has [{}]", name, fmt::join(present, ", "));
  }
  return it->second.value;
}

std::string Batch::primary() const {
  const bool ids = has(keys::input_ids);
  const bool embeds = has(keys::inputs_embeds);
  CPLAB_CHECK(ids != embeds,
              "a batch needs exactly one primary key (input_ids or inputs_embeds); {}",
              ids ? "it has both" : "it has neither");
  return ids ? keys::input_ids : keys::inputs_embeds;
}

namespace {

// The key whose shape defines B and S: the primary, else labels, else any key that is not a
// (possibly shared [1,S]) position_ids, else position_ids.
const std::pair<const std::string, TokenField>& shape_key(const Batch& batch) {
  CPLAB_CHECK(!batch.tokens.empty(), "batch has no token-aligned key to read B and S from");
  for (const char* name : {keys::input_ids, keys::inputs_embeds, keys::labels}) {
    auto it = batch.tokens.find(name);
    if (it != batch.tokens.end()) return *it;
  }
  for (const auto& entry : batch.tokens) {
    if (entry.first != keys::position_ids) return entry;
  }
  return *batch.tokens.begin();
}

void check_seq_dim(const std::string& name, const TokenField& field) {
  CPLAB_CHECK(
      field.seq_dim >= 1 && field.seq_dim < field.value.dim(),
      "token key '{}' of shape {} has seq dim {}; it needs a row dim before it (1 <= seq dim < {})",
      name, shape_str(field.value.shape()), field.seq_dim, field.value.dim());
}

void validate_packed(const Batch& batch, std::int64_t rows, std::int64_t seq_len) {
  CPLAB_CHECK(static_cast<std::int64_t>(batch.seq_lens.size()) == rows,
              "packed batch: seq_lens has {} rows, the tensors have B={}", batch.seq_lens.size(),
              rows);
  CPLAB_CHECK(
      batch.seq_lens_padded.empty() || batch.seq_lens_padded.size() == batch.seq_lens.size(),
      "packed batch: seq_lens_padded has {} rows, seq_lens has {}", batch.seq_lens_padded.size(),
      batch.seq_lens.size());
  for (std::size_t b = 0; b < batch.seq_lens.size(); ++b) {
    const auto& lens = batch.seq_lens[b];
    const bool has_padded = !batch.seq_lens_padded.empty() && !batch.seq_lens_padded[b].empty();
    const auto& padded = has_padded ? batch.seq_lens_padded[b] : lens;
    CPLAB_CHECK(padded.size() == lens.size(), "packed row {}: {} seq_lens_padded for {} documents",
                b, padded.size(), lens.size());
    for (std::size_t i = 0; i < lens.size(); ++i) {
      CPLAB_CHECK(lens[i] >= 0, "packed row {}: document {} has negative length {}", b, i, lens[i]);
      CPLAB_CHECK(padded[i] >= lens[i],
                  "packed row {}: document {} occupies {} slots, less than its {} tokens", b, i,
                  padded[i], lens[i]);
    }
    // Overflow-safe: lengths from a file may sum past 2^63.
    const std::int64_t used = limits::check_documents(padded, fmt::format("packed row {}", b));
    CPLAB_CHECK(used <= seq_len,
                "packed row {}: documents {} occupy {} slots, more than the row length S={}", b,
                fmt::format("{}", padded), used, seq_len);
  }
}

}  // namespace

std::int64_t Batch::rows() const {
  const auto& [name, field] = shape_key(*this);
  check_seq_dim(name, field);
  return field.value.size(field.seq_dim - 1);
}

std::int64_t Batch::seq_len() const {
  const auto& [name, field] = shape_key(*this);
  check_seq_dim(name, field);
  return field.value.size(field.seq_dim);
}

void validate_batch(const Batch& batch) {
  const std::string primary = batch.primary();
  for (const auto& [name, field] : batch.tokens) check_seq_dim(name, field);
  const std::int64_t rows = batch.rows();
  const std::int64_t seq_len = batch.seq_len();
  for (const auto& [name, field] : batch.tokens) {
    const std::int64_t key_rows = field.value.size(field.seq_dim - 1);
    const std::int64_t key_len = field.value.size(field.seq_dim);
    CPLAB_CHECK(key_len == seq_len,
                "token key '{}' of shape {} has {} tokens on seq dim {}; {} has S={}", name,
                shape_str(field.value.shape()), key_len, field.seq_dim, primary, seq_len);
    // A shared [1,S] row (HF position_ids) is broadcast to every row; the primary itself is not.
    const bool shared = key_rows == 1 && name != primary;
    CPLAB_CHECK(key_rows == rows || shared,
                "token key '{}' of shape {} has {} rows on dim {}; {} has B={}", name,
                shape_str(field.value.shape()), key_rows, field.seq_dim - 1, primary, rows);
  }
  if (batch.packed()) {
    validate_packed(batch, rows, seq_len);
  } else {
    CPLAB_CHECK(batch.seq_lens_padded.empty(), "seq_lens_padded given ({} rows) without seq_lens",
                batch.seq_lens_padded.size());
  }
}

void check_standard_key(const std::string& key, const Tensor& t) {
  const bool integer = t.dtype() == DType::i64 || t.dtype() == DType::i32 || t.dtype() == DType::u8;
  if (key == keys::input_ids || key == keys::labels) {
    CPLAB_CHECK(integer && t.dim() == 2, "'{}' must be an integer [B, S] tensor, found {}", key,
                tensor_brief(t));
  } else if (key == keys::position_ids) {
    CPLAB_CHECK(integer && (t.dim() == 2 || (t.dim() == 3 && t.size(0) == 3)),
                "'{}' must be an integer [B, S], [1, S] or [3, B, S] tensor, found {}", key,
                tensor_brief(t));
  } else if (key == keys::inputs_embeds) {
    const bool floating =
        t.dtype() == DType::f32 || t.dtype() == DType::bf16 || t.dtype() == DType::f16;
    CPLAB_CHECK(floating && t.dim() == 3, "'{}' must be a float [B, S, H] tensor, found {}", key,
                tensor_brief(t));
  } else if (key == keys::loss_mask) {
    // A loss mask may be a weight too: Megatron's is float, and cplab's generators draw one.
    const bool floating =
        t.dtype() == DType::f32 || t.dtype() == DType::bf16 || t.dtype() == DType::f16;
    CPLAB_CHECK((integer || floating || t.dtype() == DType::b8) && t.dim() == 2,
                "'{}' must be a bool, integer or float [B, S] tensor, found {}", key,
                tensor_brief(t));
  } else if (key == keys::valid || key == keys::padding_mask) {
    CPLAB_CHECK((integer || t.dtype() == DType::b8) && t.dim() == 2,
                "'{}' must be a bool or integer [B, S] tensor, found {}", key, tensor_brief(t));
  }
}

}  // namespace cplab
