#pragma once
// What every closed-form index map shares, host and device: which global slot a rank's k-th local
// token is, and who owns global slot g. Each layout's map is a small trivially-copyable struct in
// its own header (layouts/NAME_map.hpp) with
//   global_index(r, k) → g        owner(g) → {rank, offset}        local_len()        cp
// built from a MapView, so a kernel can be templated on the map and passed it by value. The CPU
// tests run these very functions against the reference, which derives its maps by construction.
#include <cstdint>

#include "core/host_device.hpp"

namespace cplab::index_math {

struct Slot {
  std::int64_t rank;
  std::int64_t offset;
};

CPLAB_HD constexpr std::int64_t ceil_to(std::int64_t x, std::int64_t m) {
  return x + ((m - x % m) % m);
}

// Last index i in [0, n) with a[i] <= x (a ascending, a[0] <= x). Zero-length documents repeat a
// value; taking the last such index lands on the document that really holds x.
CPLAB_HD inline std::int64_t upper_index(const std::int64_t* a, std::int64_t n, std::int64_t x) {
  std::int64_t lo = 0, hi = n;  // invariant: a[lo] <= x, answer in [lo, hi)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// The plain value every closed form is built from: which form (its position in ClosedForms,
// layouts/closed_forms.hpp), C, L, and the layout's recorded parameters. Its pointers are
// device memory when handed to a launcher, host memory when the host uses the same maps.
// layouts/layout_map.hpp owns the arrays and validates them; nothing else builds one by hand.
struct MapView {
  std::int32_t form = 0;
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;          // L
  std::int64_t unit = 0;                // the layout's scalar parameter (0: none)
  const std::int64_t* table = nullptr;  // the layout's recorded table
  std::int64_t table_len = 0;
  const std::int64_t* aux = nullptr;  // derived from the table on the host (its inverse, ...)
  std::int64_t aux_len = 0;
  CPLAB_HD std::int64_t local_len() const { return padded_len / cp; }
};

}  // namespace cplab::index_math
