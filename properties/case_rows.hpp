#pragma once
// What the generators and their domain shrinks both ask of a case's rows under its layout: the
// slots a row's documents fill, whether the layout partitions the row, and the multiple the caller
// pads each document to where the padding is the caller's.
#include <cstdint>
#include <numeric>
#include <vector>

#include "layouts/layout_descriptor.hpp"
#include "properties/case.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

inline std::int64_t occupancy(const std::vector<Document>& row) {
  return std::accumulate(row.begin(), row.end(), std::int64_t{0},
                         [](std::int64_t s, const Document& d) { return s + d.real + d.extra; });
}

// Whether the layout pads and maps rows of this spec (C > 1, or C = 1 where its options ask).
inline bool partitions(const LayoutEntry& entry, const LayoutSpec& spec) {
  return sim::partitions(*entry.descriptor, spec);
}

// The multiple every document must occupy when the padding is the caller's (the row rule of
// documents; 0: the layout pads). At C = 1 too: the caller pads for the layout as it would at C.
inline std::int64_t caller_unit(const LayoutEntry& entry, const LayoutSpec& spec) {
  const sim::RowRule& rule = entry.descriptor->row_rule;
  return rule.of == sim::RowRule::Of::documents ? rule.multiple(spec) : 0;
}

}  // namespace cplab::properties
