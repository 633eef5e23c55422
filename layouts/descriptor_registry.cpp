// The layout descriptors' registry, made from the one list of layouts (core/layouts.def).
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {

#define CPLAB_LAYOUT(id) extern const LayoutDescriptor id##_descriptor;
#include "core/layouts.def"
#undef CPLAB_LAYOUT

namespace {

// Checks each descriptor as it registers, so an incomplete one fails at once, by name.
std::vector<LayoutDescriptor> registered(std::vector<LayoutDescriptor> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LayoutDescriptor& d = entries[i];
    CPLAB_CHECK(d.name != nullptr && d.name[0] != '\0', "layout descriptor {} has no name", i);
    CPLAB_CHECK(i == 0 || std::strcmp(entries[i - 1].name, d.name) != 0,
                "layout '{}' registered twice", d.name);
    CPLAB_CHECK(d.map.form >= 0 && d.map.form < index_math::form_count(),
                "layout '{}' names closed form {}, not one of the {} registered", d.name,
                d.map.form, index_math::form_count());
    CPLAB_CHECK(d.padding.unit != nullptr, "layout '{}' registers no pad unit", d.name);
    CPLAB_CHECK(!d.local_documents || !d.bshd_rows,
                "layout '{}' keeps local documents, which BSHD rows do not have", d.name);
    CPLAB_CHECK((d.map.source == MapSource::shape) == (d.map.derive == nullptr),
                "layout '{}': a data-dependent map needs map.derive, a shape-only one none",
                d.name);
    CPLAB_CHECK(d.row_rule.of == RowRule::Of::anything || d.row_rule.multiple != nullptr,
                "layout '{}': its row rule names no multiple", d.name);
    CPLAB_CHECK(i < layouts::declarations().size() &&
                    std::strcmp(layouts::declarations()[i].name, d.name) == 0,
                "the descriptor of layout '{}' is not the one its layouts.def line declares",
                d.name);
  }
  return entries;
}

}  // namespace

const std::vector<LayoutDescriptor>& layout_descriptors() {
  static const std::vector<LayoutDescriptor> all = registered({
#define CPLAB_LAYOUT(id) id##_descriptor,
#include "core/layouts.def"
#undef CPLAB_LAYOUT
  });
  return all;
}

std::vector<std::string> layout_descriptor_names() {
  std::vector<std::string> names;
  for (const LayoutDescriptor& d : layout_descriptors()) names.emplace_back(d.name);
  return names;
}

bool partitions(const LayoutDescriptor& layout, const LayoutSpec& spec) {
  return spec.cp > 1 || (layout.padding.at_cp1 != nullptr && layout.padding.at_cp1(spec));
}

const LayoutDescriptor& layout_descriptor(const std::string& name) {
  for (const LayoutDescriptor& d : layout_descriptors()) {
    if (name == d.name) return d;
  }
  CPLAB_FAIL("unknown layout '{}'; known layouts: {}", name,
             fmt::join(layout_descriptor_names(), ", "));
}

}  // namespace cplab::sim
