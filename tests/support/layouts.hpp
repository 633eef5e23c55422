#pragma once
// The layouts every suite iterates: the registered descriptors (sim/layouts/), never a list
// written out in a test, so a new layout cannot silently skip a suite. Which rows a layout takes
// is the acceptance contract's (sim/row_acceptance.hpp: accepts, nearest_accepted), never a test's.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/layout_descriptor.hpp"
#include "sim/row_acceptance.hpp"

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
  return packed ? d.packed_rows : d.bshd_rows;
}

// Whether a layout re-lays documents at C (so the caller's own document padding is not kept).
inline bool relays_documents(const std::string& layout, std::int64_t cp) {
  return cp > 1 && sim::layout_descriptor(layout).document_unit != nullptr;
}

// A generic test that needs one layout of some kind, not each (a fault, a timeout, a report's
// shape): the first registered layout, in name order, that `wanted` accepts. The test names the
// kind, never the layout, so it keeps running whatever the registry holds; it throws naming the
// kind where no layout is of it.
inline std::string first_layout(const char* kind,
                                const std::function<bool(const sim::LayoutDescriptor&)>& wanted) {
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    if (wanted(layout)) return layout.name;
  }
  throw std::logic_error(std::string("no registered layout is ") + kind);
}

// A layout that shards rows at every C: it pads any row (no row rule), maps from C and L alone,
// takes BSHD and packed rows and keeps every document where the caller put it.
inline bool plain_sharding(const sim::LayoutDescriptor& layout) {
  return !layout.cp_off && layout.bshd_rows && layout.packed_rows &&
         layout.source == sim::MapSource::shape &&
         layout.row_rule.of == sim::RowRule::Of::anything && layout.document_unit == nullptr;
}

// The first layout that shards plainly (plain_sharding): for a test of the machinery around a
// layout (faults, timeouts, transports, reports) rather than of any one layout's map.
inline std::string a_plain_layout() {
  return first_layout("a plain sharding layout", plain_sharding);
}

}  // namespace cplab::testsupport
