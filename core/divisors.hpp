#pragma once
// The candidate values `check --layout auto` tries for a size option: the default first, then
// every divisor of the rank's length ℓ.
#include <cstdint>
#include <vector>

namespace cplab::layouts {

inline std::vector<std::int64_t> default_then_divisors(std::int64_t fallback, std::int64_t n) {
  std::vector<std::int64_t> out = {fallback};
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d == 0 && d != fallback) out.push_back(d);
  }
  return out;
}

}  // namespace cplab::layouts
