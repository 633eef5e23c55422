#pragma once
// Element types cplab moves around, and the one function template that dispatches on them.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace cplab {

enum class DType : std::uint8_t { f32, bf16, f16, i64, i32, u8, b8 };

// bfloat16 and float16 on the host: storage plus round-to-nearest-even conversion.
struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays NaN
      bits = static_cast<std::uint16_t>((u >> 16) | 0x40u);
    } else {
      bits = static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
  }
  explicit operator float() const {
    std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float f);
  explicit operator float() const;
};

std::size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
DType parse_dtype(std::string_view name);  // "f32", "bf16", ...; throws listing the supported ones

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<bf16>() {
  return DType::bf16;
}
template <>
constexpr DType dtype_of<f16>() {
  return DType::f16;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::u8;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::b8;
}

// visit_dtype(t, [](auto tag) { using T = typename decltype(tag)::type; ... })
template <typename T>
struct TypeTag {
  using type = T;
};
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      return f(TypeTag<float>{});
    case DType::bf16:
      return f(TypeTag<bf16>{});
    case DType::f16:
      return f(TypeTag<f16>{});
    case DType::i64:
      return f(TypeTag<std::int64_t>{});
    case DType::i32:
      return f(TypeTag<std::int32_t>{});
    case DType::u8:
      return f(TypeTag<std::uint8_t>{});
    case DType::b8:
      return f(TypeTag<bool>{});
  }
  CPLAB_FAIL("unknown dtype {}; supported: f32, bf16, f16, i64, i32, u8, b8", static_cast<int>(t));
}

// Element conversion through double (exact for every value cplab stores in i64 up to 2^53).
template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}
template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace cplab
