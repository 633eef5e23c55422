#pragma once
// The data of a case. Every value is a pure function of (seed, global token, feature), so any rank
// can compute what it should hold, and a wrong element says where a token landed (STYLE 11).
// A "global token" is (row b, caller position t) of the batch as the caller gave it.
#include <cstdint>
#include <optional>
#include <string>

#include "core/batch.hpp"
#include "core/tensor.hpp"
#include "properties/case.hpp"

namespace cplab::properties {

// Name and pad value of the extra token-aligned key (keys=extra).
inline constexpr const char* kExtraKey = "token_weight";
inline constexpr double kExtraPad = -1.5;
inline constexpr const char* kPassthroughKey = "pixel_values";
// Extra keys of other shapes (keys=planes, keys=features) and their declared pad values.
inline constexpr const char* kPlanesKey = "token_planes";  // [2,B,S,dim], sequence on dim 2
inline constexpr double kPlanesPad = 7.0;
inline constexpr const char* kFeaturesKey = "token_features";  // [B,S,dim]
inline constexpr double kFeaturesPad = 0.5;

// splitmix64 over (seed, a, b, c): the one source of pseudo-randomness of case data.
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c);

// Whether caller slot t of row b holds a document's token (false: the caller's own document or
// row padding of a packed row; BSHD rows have none).
bool caller_real(const Case& c, std::int64_t b, std::int64_t t);
// Leading pad slots of BSHD row b (left padding, as generation-style collators write it): the
// layout cannot tell them from tokens, the data marks them (pad id, IGNORE, invalid, padding_mask).
std::int64_t left_pad_slots(const Case& c, std::int64_t b);
// Whether the caller's data marks (b, t) as padding: its own padding in a packed row, or a left
// pad slot of a BSHD row.
bool caller_padding(const Case& c, std::int64_t b, std::int64_t t);
// The caller's position id of (b, t). BSHD: per rowpos= (arange, from a per-row offset, or
// restarting at document boundaries inside the row) after the left pad slots, which hold 1 (as
// HF's masked_fill writes them). Packed: restarting per document and running on through the
// document's own padding, continuing the last document after it (SPEC §1).
std::int64_t caller_position(const Case& c, std::int64_t b, std::int64_t t);

std::int64_t token_id(const Case& c, std::int64_t b, std::int64_t t);
std::int64_t token_label(const Case& c, std::int64_t b, std::int64_t t);  // kIgnoreIndex in holes
bool token_valid(const Case& c, std::int64_t b, std::int64_t t);

// Self-locating code of (b, t, feature): 1 + f + H·(t + len·b), shifted by the seed, reduced to
// what the case's dtype holds exactly (bf16: 256 values, f16: 2048, u8: 256, b8: 2); decode_locator
// inverts it where the dtype kept it whole (i64, i32, f32 for every case the generators draw).
double locator(const Case& c, std::int64_t len, std::int64_t b, std::int64_t t, std::int64_t f);
struct TokenAt {
  std::int64_t row, pos, feature;
};
std::optional<TokenAt> decode_locator(const Case& c, std::int64_t len, double value);
// "the value of token (b=1, t=7, f=0)", or "" when the value does not locate a token.
std::string describe_value(const Case& c, std::int64_t len, double value);

// The batch of the case: input_ids or inputs_embeds, labels, valid, the optional keys, and a
// pass-through tensor; packed rows carry seq_lens (and seq_lens_padded when the caller pads).
Batch make_batch(const Case& c);
// The rows [first, first + count) of make_batch(c), as a batch of their own (one microbatch).
Batch make_batch_rows(const Case& c, std::int64_t first, std::int64_t count);

// A token-aligned tensor [rows, len, dim] of the case's dtype holding locator(c, len, ·) values.
Tensor token_tensor(const Case& c, std::int64_t first_row, std::int64_t rows, std::int64_t len);
// Deterministic float values in [-scale, scale] for logits, q/k/v and gradients, keyed by `stream`.
Tensor float_tensor(std::uint64_t seed, std::uint64_t stream, const Shape& shape, float scale);

}  // namespace cplab::properties
