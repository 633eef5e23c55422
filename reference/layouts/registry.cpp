// The reference's layout registry: one line per layout file in this folder.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "reference/plan.hpp"
#include "reference/types/error.hpp"

namespace cplab::reference {

extern const LayoutInfo contiguous_layout;
extern const LayoutInfo head_tail_layout;
extern const LayoutInfo identity_layout;
extern const LayoutInfo magi_layout;
extern const LayoutInfo stripe_layout;
extern const LayoutInfo thd_layout;
extern const LayoutInfo usp_layout;
extern const LayoutInfo per_doc_head_tail_layout;
extern const LayoutInfo ptrr_layout;
extern const LayoutInfo llama3_varlen_layout;

namespace {

// Checks each entry as it registers: a name, a plan function, no duplicate names.
std::vector<LayoutInfo> registered(std::vector<LayoutInfo> entries) {
  std::sort(entries.begin(), entries.end(), [](const LayoutInfo& a, const LayoutInfo& b) {
    return std::strcmp(a.name, b.name) < 0;
  });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CPLAB_CHECK(entries[i].name != nullptr && entries[i].name[0] != '\0',
                "layout entry {} has no name", i);
    CPLAB_CHECK(entries[i].plan_row != nullptr, "layout '{}' registers no plan function",
                entries[i].name);
    CPLAB_CHECK(i == 0 || std::strcmp(entries[i - 1].name, entries[i].name) != 0,
                "layout '{}' registered twice", entries[i].name);
  }
  return entries;
}

}  // namespace

const std::vector<LayoutInfo>& layouts() {
  static const std::vector<LayoutInfo> all = registered({
      contiguous_layout,
      head_tail_layout,
      identity_layout,
      magi_layout,
      stripe_layout,
      thd_layout,
      usp_layout,
      per_doc_head_tail_layout,
      ptrr_layout,
      llama3_varlen_layout,
  });
  return all;
}

std::vector<std::string> layout_names() {
  std::vector<std::string> names;
  for (const LayoutInfo& info : layouts()) names.emplace_back(info.name);
  return names;
}

const LayoutInfo& layout_info(const std::string& name) {
  for (const LayoutInfo& info : layouts()) {
    if (name == info.name) return info;
  }
  CPLAB_FAIL("unknown layout '{}'; known layouts: {}", name, fmt::join(layout_names(), ", "));
}

}  // namespace cplab::reference
