#pragma once
// What one launch of the block-attention kernels reads (gpu/attention/), as plain structs: the
// arrays gpu/host/attention_plan.hpp builds on the host and the kernels index on the device. Free
// of fmt and of the schedule's types, so .cu files include it (nvcc rejects fmt's compile-time
// format strings).
#include <cstdint>

#include "attention/block_mask.hpp"

namespace cplab::gpu {

// The element types of attention tensors (the implementation maps DType onto them).
enum class AttnElem : std::uint8_t { f32, bf16, f16 };

// One buffer position as a kernel reads it: `token`, the row of the tensor it reads ([tokens]
// [heads][d]: the local q for queries, the held K/V for keys); `fact`, its entry in the facts
// table (row · L + global slot), read by doc-causal blocks and by nothing else.
struct AttnPosition {
  std::int64_t token = 0;
  std::int64_t fact = 0;
};

// A schedule block with its ranges resolved into the launch's position arrays.
struct AttnBlock {
  std::int64_t q_begin = 0, q_len = 0;  // into the launch's query positions
  std::int64_t k_begin = 0, k_len = 0;  // into the launch's key positions
  std::int64_t out_begin = 0;           // its first row in the block-output scratch
  std::int64_t diagonal = 0;            // causal only
  std::int32_t mask = sim::kMaskFull;
  std::int32_t row = 0;  // the microbatch row it belongs to (for messages and tests)
};

// Rows [begin, begin + len) of one block's queries (query tiles) or keys (key tiles): one thread
// block of a launch each.
struct AttnTile {
  std::int64_t block = 0;
  std::int64_t begin = 0, len = 0;
};

inline bool operator==(const AttnPosition& a, const AttnPosition& b) {
  return a.token == b.token && a.fact == b.fact;
}
inline bool operator==(const AttnTile& a, const AttnTile& b) {
  return a.block == b.block && a.begin == b.begin && a.len == b.len;
}

// Queries (and keys) per thread block of the kernels: one thread per query of a tile. Small and
// simple over fast: the kernels check schedules at test sizes, not train at production ones.
inline constexpr std::int64_t kAttnTile = 64;

}  // namespace cplab::gpu
