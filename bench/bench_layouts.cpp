#include "bench/bench_layouts.hpp"

#include <cstdint>
#include <vector>

#include "reference/plan.hpp"

namespace cplab::bench {

bool causally_balanced(const sim::LayoutDescriptor& layout) {
  if (!plain_sharding(layout)) return false;
  for (const std::int64_t cp : {2, 3, 4, 8}) {
    LayoutSpec spec;
    spec.layout = layout.name;
    spec.cp = cp;
    // A row of four pad units: every slot real, one document.
    const RowPlan row = reference::plan_row(spec, 4 * layout.padding.unit(spec));
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

std::string a_balanced_layout() {
  return first_layout("a plain sharding layout of causally balanced ranks", causally_balanced);
}

}  // namespace cplab::bench
