// The layout table, made from the one list of layouts (core/layouts.def).
#include "properties/layout_table.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"

namespace cplab::properties {

#define CPLAB_LAYOUT(id) extern const LayoutEntry id##_entry;
#include "core/layouts.def"
#undef CPLAB_LAYOUT

namespace {

// Validates every entry as it registers and ties it to its reference layout, so a layout the
// reference knows but the properties do not (or the reverse) fails at once, by name.
std::vector<LayoutEntry> registered(std::vector<LayoutEntry> entries) {
  const std::vector<std::string> reference_names = reference::layout_names();
  for (LayoutEntry& entry : entries) {
    CPLAB_CHECK(!entry.name.empty(), "a layout table entry has no name");
    entry.reference = &reference::layout_info(entry.name);
    const std::vector<std::string> described = sim::layout_descriptor_names();
    CPLAB_CHECK(std::find(described.begin(), described.end(), entry.name) != described.end(),
                "layout '{}' has a property entry but no descriptor (layouts/ and its registry "
                "line); described layouts: {}",
                entry.name, fmt::join(described, ", "));
    entry.descriptor = &sim::layout_descriptor(entry.name);
    CPLAB_CHECK(entry.balance != nullptr, "layout '{}' registers no load-balance rule", entry.name);
    CPLAB_CHECK(!entry.descriptor->local_documents || entry.local_document_valid != nullptr,
                "layout '{}' keeps whole local documents but registers no valid-count rule "
                "(local_document_valid)",
                entry.name);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < entries.size(); ++i) {
    CPLAB_CHECK(entries[i - 1].name != entries[i].name, "layout '{}' registered twice",
                entries[i].name);
  }
  for (const std::string& name : reference_names) {
    CPLAB_CHECK(
        std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.name == name; }),
        "the reference has layout '{}' but the property layout table has no entry for it", name);
  }
  for (const std::string& name : sim::layout_descriptor_names()) {
    CPLAB_CHECK(
        std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.name == name; }),
        "layout '{}' has a descriptor but the property layout table has no entry for it", name);
  }
  return entries;
}

}  // namespace

const std::vector<LayoutEntry>& layout_table() {
  static const std::vector<LayoutEntry> table = registered({
#define CPLAB_LAYOUT(id) id##_entry,
#include "core/layouts.def"
#undef CPLAB_LAYOUT
  });
  return table;
}

std::vector<std::string> layout_table_names() {
  std::vector<std::string> names;
  for (const LayoutEntry& entry : layout_table()) names.push_back(entry.name);
  return names;
}

const LayoutEntry& layout_entry(const std::string& name) {
  for (const LayoutEntry& entry : layout_table()) {
    if (entry.name == name) return entry;
  }
  CPLAB_FAIL("unknown layout '{}'; known layouts: {}", name, fmt::join(layout_table_names(), ", "));
}

sim::LayoutMap reference_map(const LayoutEntry& entry, const RowPlan& row) {
  return sim::LayoutMap(*entry.descriptor, row.cp, row.padded_len, row.map);
}

}  // namespace cplab::properties
