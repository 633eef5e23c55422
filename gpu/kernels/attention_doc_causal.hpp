#pragma once
// Single-head attention of one rank's queries over every rank's keys (SPEC §7) under the
// document-causal mask: query g sees key h when both are real, in one document, and h <= g.
// One thread per query, keys in a loop: a checking kernel for test sizes, not a fast one.
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

inline constexpr std::int64_t kAttentionMaxHead = 256;

// Keys and their metadata are the all-gather of every rank's [B, ℓ, ...]: blocks [C][B][ℓ].
struct DocCausalAttention {
  std::int64_t rows = 0, local = 0, cp = 1, head = 0;  // B, ℓ, C, D
  const float* q = nullptr;                            // [B, ℓ, D] local queries
  const float* k = nullptr;                            // [C][B][ℓ][D] gathered keys
  const float* v = nullptr;                            // likewise values
  const std::int64_t* query_slot = nullptr;            // [ℓ] global slot of each local query
  const std::int32_t* query_doc = nullptr;             // [B, ℓ]
  const std::uint8_t* query_real = nullptr;            // [B, ℓ]
  const std::int64_t* key_slot = nullptr;  // [C·ℓ] global slot of gathered key j (rank-major)
  const std::int32_t* key_doc = nullptr;   // [C][B][ℓ]
  const std::uint8_t* key_real = nullptr;  // [C][B][ℓ]
  // Optional, for layouts whose ranks attend through varlen segments: [B, ℓ, 2], the global slots
  // [begin, end) of the keys each local query may see (real ones only), replacing the
  // document-causal mask. Null: the document-causal mask.
  const std::int64_t* key_window = nullptr;
};

// out [B, ℓ, D] (0 for a query that sees nothing) and lse [B, ℓ] (-inf there).
void attention_forward(const DocCausalAttention& a, float* out, float* lse, Stream stream);
// Given grad_out [B, ℓ, D] and the forward's out and lse: grad_q [B, ℓ, D] (written) and
// grad_k, grad_v [C][B][ℓ][D] (accumulated: zero them first), still to be summed to their owners.
void attention_backward(const DocCausalAttention& a, const float* out, const float* lse,
                        const float* grad_out, float* grad_q, float* grad_k, float* grad_v,
                        Stream stream);

}  // namespace cplab::gpu
