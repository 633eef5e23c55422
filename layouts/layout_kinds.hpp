#pragma once
// Layouts asked of the registry by kind, never by name: code that needs one layout of some kind
// (a test of the machinery around a layout, a benchmark of a kernel as users mostly run it)
// names the kind, so it keeps running whatever the registry holds.
#include <functional>
#include <stdexcept>
#include <string>

#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {

// The first registered layout, in name order, that `wanted` accepts; throws naming the kind where
// no layout is of it.
inline std::string first_layout(const char* kind,
                                const std::function<bool(const LayoutDescriptor&)>& wanted) {
  for (const LayoutDescriptor& layout : layout_descriptors()) {
    if (wanted(layout)) return layout.name;
  }
  throw std::logic_error(std::string("no registered layout is ") + kind);
}

// A layout that shards rows at every C: it pads any row (no row rule), maps from C and L alone,
// takes BSHD and packed rows and keeps every document where the caller put it.
inline bool plain_sharding(const LayoutDescriptor& layout) {
  return !layout.cp_off && layout.bshd_rows && layout.map.source == MapSource::shape &&
         layout.row_rule.of == RowRule::Of::anything && layout.padding.document_unit == nullptr;
}

// The first layout that shards plainly (plain_sharding).
inline std::string a_plain_layout() {
  return first_layout("a plain sharding layout", plain_sharding);
}

}  // namespace cplab::sim
