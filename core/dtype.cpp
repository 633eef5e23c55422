#include "core/dtype.hpp"

#include <cmath>

namespace cplab {

f16::f16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::int32_t exp = static_cast<std::int32_t>((u >> 23) & 0xffu) - 127 + 15;
  std::uint32_t mant = u & 0x7fffffu;
  if (((u >> 23) & 0xffu) == 0xffu) {  // inf or NaN
    bits = static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  } else if (exp >= 31) {
    bits = static_cast<std::uint16_t>(sign | 0x7c00u);
  } else if (exp <= 0) {  // subnormal or zero
    if (exp < -10) {
      bits = static_cast<std::uint16_t>(sign);
    } else {
      mant |= 0x800000u;
      const int shift = 14 - exp;
      std::uint32_t half = mant >> shift;
      const std::uint32_t rem = mant & ((1u << shift) - 1u);
      const std::uint32_t mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1u))) ++half;
      bits = static_cast<std::uint16_t>(sign | half);
    }
  } else {
    std::uint32_t half = sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
    const std::uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    bits = static_cast<std::uint16_t>(half);
  }
}

f16::operator float() const {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  const std::uint32_t mant = bits & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  std::uint32_t u = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                              : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
  std::memcpy(&f, &u, 4);
  return f;
}

std::size_t dtype_size(DType t) {
  return visit_dtype(t, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
    case DType::i64:
      return "i64";
    case DType::i32:
      return "i32";
    case DType::u8:
      return "u8";
    case DType::b8:
      return "b8";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType t :
       {DType::f32, DType::bf16, DType::f16, DType::i64, DType::i32, DType::u8, DType::b8}) {
    if (dtype_name(t) == name) return t;
  }
  CPLAB_FAIL("unknown dtype '{}'; supported: f32, bf16, f16, i64, i32, u8, b8", name);
}

}  // namespace cplab
