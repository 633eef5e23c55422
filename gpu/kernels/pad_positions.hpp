#pragma once
// Continued position ids of the slots a layout added (SPEC §2), written after copy_tokens has
// placed the caller's tokens: value = caller value at the anchor + delta (gpu/host/pad_anchors).
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

enum class PositionElem : std::uint8_t { i64, i32, f32 };

struct ContinuePositions {
  void* dst = nullptr;        // [outer, rows, local, inner]
  const void* src = nullptr;  // the caller tensor [outer, src_rows, src_tokens, inner]
  PositionElem elem = PositionElem::i64;
  std::int64_t outer = 1, rows = 1, src_rows = 1, src_row_begin = 0, src_tokens = 0, local = 0,
               inner = 1;
  const std::int64_t* anchor = nullptr;  // device [local]
  const std::int64_t* delta = nullptr;   // device [local]
};

void continue_positions(const ContinuePositions& args, Stream stream);

}  // namespace cplab::gpu
