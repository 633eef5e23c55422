#pragma once
// Whether a fill value is a value of a dtype: what a verb that writes a caller's fill into a tensor
// checks first, so that -7 never becomes `true` in a mask nor an out-of-range cast in a uint8.
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/dtype.hpp"

namespace cplab {

// Integral and in range for the integer dtypes, 0 or 1 for bool, and for the floating dtypes any
// value that rounds to itself (NaN included: a float tensor may be filled with it).
inline bool holds_exactly(DType t, double v) {
  return visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      // [lowest, max] as doubles; the top is exclusive because max()+1 is what a double of max()
      // of a 64-bit type rounds to.
      const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);
      return v >= static_cast<double>(std::numeric_limits<T>::lowest()) && v < top &&
             std::trunc(v) == v;
    } else {
      return std::isnan(v) || to_double(from_double<T>(v)) == v;
    }
  });
}

}  // namespace cplab
