#pragma once
// The layouts every suite iterates: the registered descriptors (layouts/), never a list
// written out in a test, so a new layout cannot silently skip a suite. Which rows a layout takes
// is the acceptance contract's (layouts/row_acceptance.hpp: accepts, nearest_accepted), never a
// test's.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "layouts/layout_descriptor.hpp"
#include "layouts/layout_kinds.hpp"
#include "layouts/row_acceptance.hpp"

namespace cplab::testsupport {

// (layout, C) for every registered layout and every C of cps it takes (a CP-off layout: C = 1).
inline std::vector<std::pair<std::string, std::int64_t>> layouts_at(
    const std::vector<std::int64_t>& cps) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : cps) {
      if (cp == 1 || !layout.cp_off) out.emplace_back(layout.name, cp);
    }
  }
  return out;
}

// Whether a layout takes BSHD rows (packed = false) or packed rows (packed = true).
inline bool takes_rows(const std::string& layout, bool packed) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(layout);
  return packed || d.bshd_rows;  // every layout takes packed rows
}

// Whether a layout re-lays documents at C (so the caller's own document padding is not kept).
inline bool relays_documents(const std::string& layout, std::int64_t cp) {
  return cp > 1 && sim::layout_descriptor(layout).padding.document_unit != nullptr;
}

// A generic test that needs one layout of some kind, not each (a fault, a timeout, a report's
// shape) asks the registry by kind (layouts/layout_kinds.hpp).
using sim::a_plain_layout;
using sim::first_layout;
using sim::plain_sharding;

}  // namespace cplab::testsupport
