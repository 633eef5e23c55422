#pragma once
// acc = op(acc, in) elementwise on the device: the arithmetic of the one-GPU device-sim comm's
// all-reduce and reduce-scatter, applied rank by rank in rank order so every rank gets the same
// bits.
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

// The element types a device reduction supports (the comm maps DType onto them).
enum class ReduceElem : std::uint8_t { f32, bf16, f16, i64, i32, u8 };
enum class ReduceKind : std::uint8_t { sum, max };

void reduce_into(void* acc, const void* in, std::int64_t count, ReduceElem elem, ReduceKind op,
                 Stream stream);

}  // namespace cplab::gpu
