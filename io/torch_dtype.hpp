#pragma once
// The dtypes cplab and libtorch share, each way: one table for every translation unit that meets
// libtorch (the torch.save reader, the Python module's tensor bridge). Include it only there:
// it brings in ATen's scalar types.
#include <c10/core/ScalarType.h>

#include <optional>

#include "core/dtype.hpp"

namespace cplab::io {

// nullopt for a dtype cplab does not hold (the caller names it in its own words).
inline std::optional<DType> dtype_from_torch(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat:
      return DType::f32;
    case c10::kBFloat16:
      return DType::bf16;
    case c10::kHalf:
      return DType::f16;
    case c10::kLong:
      return DType::i64;
    case c10::kInt:
      return DType::i32;
    case c10::kByte:
      return DType::u8;
    case c10::kBool:
      return DType::b8;
    default:
      return std::nullopt;
  }
}

inline c10::ScalarType dtype_to_torch(DType t) {
  switch (t) {
    case DType::f32:
      return c10::kFloat;
    case DType::bf16:
      return c10::kBFloat16;
    case DType::f16:
      return c10::kHalf;
    case DType::i64:
      return c10::kLong;
    case DType::i32:
      return c10::kInt;
    case DType::u8:
      return c10::kByte;
    case DType::b8:
      return c10::kBool;
  }
  return c10::kFloat;  // unreachable: every DType is listed
}

}  // namespace cplab::io
