// The layout table: one line per layout file in properties/layouts/.
#include "properties/layout_table.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "reference/types/error.hpp"

namespace cplab::properties {

extern const LayoutEntry contiguous_entry;
extern const LayoutEntry head_tail_entry;
extern const LayoutEntry identity_entry;
extern const LayoutEntry magi_entry;
extern const LayoutEntry thd_entry;

namespace {

// Validates every entry as it registers and ties it to its reference layout, so a layout the
// reference knows but the properties do not (or the reverse) fails at once, by name.
std::vector<LayoutEntry> registered(std::vector<LayoutEntry> entries) {
  const std::vector<std::string> reference_names = reference::layout_names();
  for (LayoutEntry& entry : entries) {
    CPLAB_CHECK(!entry.name.empty(), "a layout table entry has no name");
    entry.reference = &reference::layout_info(entry.name);
    CPLAB_CHECK(entry.closed_form != nullptr, "layout '{}' registers no closed-form map",
                entry.name);
    CPLAB_CHECK(entry.pad_unit != nullptr, "layout '{}' registers no pad unit", entry.name);
    CPLAB_CHECK(entry.bshd_rows || entry.packed_rows,
                "layout '{}' takes neither BSHD nor packed rows", entry.name);
    CPLAB_CHECK(!entry.local_documents || !entry.bshd_rows,
                "layout '{}' keeps local documents, which BSHD rows do not have", entry.name);
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
  return entries;
}

}  // namespace

const std::vector<LayoutEntry>& layout_table() {
  static const std::vector<LayoutEntry> table = registered({
      contiguous_entry,
      head_tail_entry,
      identity_entry,
      magi_entry,
      thd_entry,
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

MapParams map_params(const RowPlan& row, const LayoutSpec& spec) {
  MapParams p;
  p.cp = row.cp;
  p.padded_len = row.padded_len;
  p.cu_seqlens_padded = row.cu_seqlens_padded;
  for (const auto& chunks : row.magi_chunks)
    p.magi_rank_chunks.insert(p.magi_rank_chunks.end(), chunks.begin(), chunks.end());
  p.chunk_size = spec.chunk_size;
  return p;
}

}  // namespace cplab::properties
