#pragma once
// Helpers the layout entries share: wrapping an index_math map (and the arrays it points into)
// as a ClosedFormMap.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "properties/layout_table.hpp"
#include "reference/types/error.hpp"

namespace cplab::properties {

// `keep` owns whatever the map points into, for as long as the ClosedFormMap lives.
template <typename Map>
ClosedFormMap closed_form_of(const Map& map, std::shared_ptr<const void> keep = nullptr) {
  ClosedFormMap out;
  out.local_len = map.local_len();
  out.global_index = [map, keep](std::int64_t r, std::int64_t k) { return map.global_index(r, k); };
  out.owner = [map, keep](std::int64_t g) { return map.owner(g); };
  return out;
}

inline ClosedFormMap contiguous_closed_form(const MapParams& p) {
  return closed_form_of(index_math::ContiguousMap{p.cp, p.padded_len});
}

// thd's map divides by each document's chunk: refuse bounds that are not [0, ..., L] in steps of
// multiples of 2C (a wrong recorded parameter is a failure to report, not a division by zero).
inline void check_thd_params(const MapParams& p) {
  const auto& cu = p.cu_seqlens_padded;
  CPLAB_CHECK(cu.size() >= 2 && cu.front() == 0 && cu.back() == p.padded_len,
              "thd cu_seqlens_padded {} does not span [0, L={}]", fmt::format("{}", cu),
              p.padded_len);
  for (std::size_t i = 1; i < cu.size(); ++i) {
    CPLAB_CHECK(cu[i] >= cu[i - 1] && (cu[i] - cu[i - 1]) % (2 * p.cp) == 0,
                "thd cu_seqlens_padded {}: document {} occupies {} slots, not a multiple of 2C={}",
                fmt::format("{}", cu), i - 1, cu[i] - cu[i - 1], 2 * p.cp);
  }
}

}  // namespace cplab::properties
