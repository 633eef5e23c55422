#include "bench/bench_layouts.hpp"

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "reference/plan.hpp"

namespace cplab::bench {

std::string first_layout(const char* kind,
                         const std::function<bool(const sim::LayoutDescriptor&)>& wanted) {
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    if (wanted(layout)) return layout.name;
  }
  throw std::logic_error(std::string("no registered layout is ") + kind);
}

bool plain_sharding(const sim::LayoutDescriptor& layout) {
  return !layout.cp_off && layout.bshd_rows && layout.packed_rows &&
         layout.source == sim::MapSource::shape &&
         layout.row_rule.of == sim::RowRule::Of::anything && layout.document_unit == nullptr;
}

bool causally_balanced(const sim::LayoutDescriptor& layout) {
  if (!plain_sharding(layout)) return false;
  for (const std::int64_t cp : {2, 3, 4, 8}) {
    LayoutSpec spec;
    spec.layout = layout.name;
    spec.cp = cp;
    // A row of four pad units: every slot real, one document.
    const RowPlan row = reference::plan_row(spec, 4 * layout.pad_unit(spec));
    std::vector<std::int64_t> work;
    for (const std::vector<std::int64_t>& index : row.index) {
      std::int64_t keys = 0;
      for (const std::int64_t g : index) keys += g + 1;  // slot g's query sees keys 0..g
      work.push_back(keys);
    }
    for (const std::int64_t w : work) {
      if (w != work.front()) return false;
    }
  }
  return true;
}

std::string a_plain_layout() { return first_layout("a plain sharding layout", plain_sharding); }

std::string a_balanced_layout() {
  return first_layout("a plain sharding layout of causally balanced ranks", causally_balanced);
}

}  // namespace cplab::bench
