#pragma once
// Helpers of the hook tests (hooks_layout_test.cpp, hooks_loss_test.cpp) and of the layouts' own
// hook tests (layouts/ID_test.cpp): the packed row they share, a loss check of one variant, and
// the registered layouts that take a batch at some C, for the hooks no one layout owns.
#include <cstdint>
#include <string>
#include <vector>

#include "layouts/layout_descriptor.hpp"
#include "loss_check.hpp"

namespace cplab::simtest {

// One packed row of documents 5, 3 and 8.
inline const Batch& docs_5_3_8() {
  static const Batch batch = packed_batch({{5, 3, 8}}, 16);
  return batch;
}

template <typename Variant>
std::string loss_report(const std::string& layout, std::int64_t cp, const Batch& batch) {
  Variant variant;
  return check_loss_against_reference(spec_for(layout, cp), batch, &variant);
}

// Every registered layout the reference plans `batch` with at C = cp (spec_for's options).
inline std::vector<std::string> layouts_taking(std::int64_t cp, const Batch& batch) {
  std::vector<std::string> out;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    if (layout.cp_off && cp > 1) continue;
    if (error_of([&] { reference::plan(spec_for(layout.name, cp), batch); }).empty())
      out.emplace_back(layout.name);
  }
  return out;
}

}  // namespace cplab::simtest
