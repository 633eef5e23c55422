#pragma once
// A batch as a CP sharder receives it: named token-aligned tensors (each with its sequence dim and
// how to pad it), pass-through tensors, and for packed (THD) rows the document lengths.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace cplab {

// How the slots a layout appends (or inserts, thd) are filled for one key (SPEC §2).
enum class PadRule : std::uint8_t {
  constant,            // TokenField::pad_value
  pad_token,           // the pad token id of the LayoutSpec (input_ids)
  continue_positions,  // last+1, last+2, ... along the row (position_ids); 0 under PadPolicy::zero
};

struct TokenField {
  Tensor value;
  std::int64_t seq_dim =
      1;  // [B,S,...] → 1; mRoPE position_ids [3,B,S] → 2; the row dim is seq_dim-1
  PadRule rule = PadRule::constant;
  double pad_value = 0.0;
};

// Well-known keys (SPEC §1). Anything else is an "extra" key with a declared seq dim and pad value.
namespace keys {
inline constexpr const char* input_ids = "input_ids";
inline constexpr const char* inputs_embeds = "inputs_embeds";
inline constexpr const char* labels = "labels";
inline constexpr const char* position_ids = "position_ids";
inline constexpr const char* loss_mask = "loss_mask";
inline constexpr const char* valid = "valid";
inline constexpr const char* padding_mask = "padding_mask";
}  // namespace keys

inline constexpr std::int64_t kIgnoreIndex = -100;

// The default TokenField of a key: its pad rule and value per SPEC §2, seq dim 1 ([B,S,...]),
// except mRoPE position_ids ([3,B,S]) on dim 2.
TokenField default_token_field(const std::string& name, Tensor value);

struct Batch {
  std::map<std::string, TokenField> tokens;   // token-aligned, sharded along their seq dim
  std::map<std::string, Tensor> passthrough;  // non-token tensors: every rank gets them unchanged

  // Packed rows (THD): one entry per row, the real length of each document, and optionally the
  // length each occupies in the row (>= the real one; empty means equal to seq_lens). Empty for
  // BSHD.
  std::vector<std::vector<std::int64_t>> seq_lens;
  std::vector<std::vector<std::int64_t>> seq_lens_padded;

  bool packed() const { return !seq_lens.empty(); }
  // Adds a token-aligned key with its default field (seq dim, pad rule).
  void add(const std::string& name, Tensor value) {
    tokens[name] = default_token_field(name, std::move(value));
  }
  const Tensor& at(const std::string& name) const;
  bool has(const std::string& name) const { return tokens.count(name) != 0; }

  // Rows B and caller sequence length S, read from the primary (input_ids or inputs_embeds), else
  // from labels. Throws when the batch has no token-aligned key.
  std::int64_t rows() const;
  std::int64_t seq_len() const;
  // The primary key present: "input_ids" or "inputs_embeds" (exactly one must be).
  std::string primary() const;
};

// Checks what every sharder needs of a batch and throws one clear error otherwise: exactly one
// primary, every token key with the same B and S on its row and seq dims (a shared [1,S] is
// allowed), packed metadata consistent (one entry per row, non-negative lengths, seq_lens_padded
// >= seq_lens, the documents fit in S).
void validate_batch(const Batch& batch);

}  // namespace cplab
