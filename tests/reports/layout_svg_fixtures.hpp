#pragma once
// The layout picture's test helpers, shared by layout_svg_test.cpp and the layouts' own picture
// tests (tests/reports/layouts/ID_test.cpp): a spec at C with small options, a packed row the
// layout takes, the picture read back, and its elements of one class.
#include <cstdint>
#include <string>
#include <vector>

#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "layouts/row_acceptance.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "reports/layout_svg.hpp"
#include "tests/reports/svg_reader.hpp"

namespace cplab::testing {

using Ints = std::vector<std::int64_t>;

inline LayoutSpec spec_of(const std::string& layout, std::int64_t cp) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::magi_chunk_size.set(spec, 4);
  layouts::ptrr_block_size.set(spec, 1);
  return spec;
}

// The documents back to back, in the row nearest to them that the layout takes (as the caller
// pads them for it, or fitted to the lengths it takes).
inline RowPlan packed_row(const std::string& layout, std::int64_t cp, const Ints& docs) {
  const LayoutSpec spec = spec_of(layout, cp);
  const sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row(docs));
  return reference::plan_row(spec, row.seq_len, &docs, &row.documents);
}

inline SvgDocument draw(const RowPlan& row, const std::string& title = "test") {
  return read_svg(reports::layout_svg(row, reference::causal_work(row), title));
}

inline std::vector<const SvgElement*> with_class(const SvgDocument& doc, const std::string& cls) {
  std::vector<const SvgElement*> out;
  for (const auto& e : doc.elements) {
    if (e.attr("class") == cls) out.push_back(&e);
  }
  return out;
}

}  // namespace cplab::testing
