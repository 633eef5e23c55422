#pragma once
// What a rank hands a varlen attention kernel when its queries attend through per-rank segments
// (ring-flash-attention's llama3_flash_attn_prepare_cu_seqlens, torch's VarlenMetadata): its query
// segments, the key segments that pair with them, and the slice of the gathered keys they index.
#include <cstdint>
#include <vector>

namespace cplab {

struct VarlenSegments {
  std::vector<std::int64_t> cu_seqlens_q;  // local query segments, [0, ..., ℓ]
  std::vector<std::int64_t> cu_seqlens_k;  // key segments as offsets into the key slice
  std::int64_t k_begin = 0;                // the key slice [k_begin, k_end) of global slots
  std::int64_t k_end = 0;
  bool operator==(const VarlenSegments&) const = default;
};

}  // namespace cplab
