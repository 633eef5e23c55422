#pragma once
// Moves whole token slices along a sequence dim by an index array: the one data-movement kernel
// behind shard (local[k] = global[idx[k]]), gather (global[g] = gathered[owner(g)]), trim and the
// gather backward. Sources and destinations are either plain [outer, tokens, ...] tensors or blocks
// [tokens / block][outer][block][...] as an all-gather or a reduce-scatter lays out rank shards.
#include <array>
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

// Tensors are viewed as [outer, rows, tokens, inner] with the row dim just before the sequence dim
// (mRoPE positions [3, B, S] have outer 3); inner elements of a token move together.
struct TokenCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  std::int64_t outer = 1;  // product of the dims before the row dim
  std::int64_t rows = 1;   // destination rows
  std::int64_t src_rows =
      1;  // source rows: 1 (one row shared by all) or at least src_row_begin + rows
  std::int64_t src_row_begin = 0;  // the source row of destination row 0 (a microbatch's first row)
  std::int64_t token_bytes = 0;    // inner elements × element size
  std::int64_t element_bytes = 1;  // 1, 2, 4 or 8 (fixes the fill pattern's period)
  std::int64_t src_tokens = 0;     // along the source's sequence dim, all blocks together
  std::int64_t src_block = 0;      // 0: plain; b > 0: [src_tokens / b][outer·src_rows][b] blocks
  std::int64_t dst_tokens = 0;
  std::int64_t dst_block = 0;  // likewise, [dst_tokens / b][outer·rows][b]
  // Device [source_rows][dst_tokens]: the source token of each destination token; -1 = fill.
  const std::int64_t* source = nullptr;
  std::int64_t source_rows = 1;         // 1 (one index for every row) or `rows`
  std::array<std::uint8_t, 16> fill{};  // gpu/host/copy_plan.hpp fill_pattern
  // Optional device slot (ErrorSlot): lowered to the first flat destination token
  // ((o·rows + b)·dst_tokens + t) whose source is outside [-1, src_tokens); such tokens are filled.
  std::int64_t* bad = nullptr;
};

void copy_tokens(const TokenCopy& copy, Stream stream);

}  // namespace cplab::gpu
