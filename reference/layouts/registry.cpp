// The reference's layout registry, made from the one list of layouts (core/layouts.def).
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {

#define CPLAB_LAYOUT(id) extern const LayoutInfo id##_layout;
#include "core/layouts.def"
#undef CPLAB_LAYOUT

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
  // One line of layouts.def made both lists: the reference plans every declared layout.
  const auto& declared = layouts::declarations();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CPLAB_CHECK(i < declared.size() && std::strcmp(entries[i].name, declared[i].name) == 0,
                "the reference's layout '{}' is not the one its layouts.def line declares ('{}')",
                entries[i].name, i < declared.size() ? declared[i].name : "none");
  }
  return entries;
}

}  // namespace

const std::vector<LayoutInfo>& layouts() {
  static const std::vector<LayoutInfo> all = registered({
#define CPLAB_LAYOUT(id) id##_layout,
#include "core/layouts.def"
#undef CPLAB_LAYOUT
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
