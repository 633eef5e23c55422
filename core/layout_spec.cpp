#include "core/layout_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"

namespace cplab {

void validate_spec(const LayoutSpec& spec) {
  CPLAB_CHECK(spec.cp >= 1, "CP size must be at least 1, got cp={}", spec.cp);
  CPLAB_CHECK(spec.microbatches >= 1,
              "pipeline microbatches must be at least 1, got microbatches={}", spec.microbatches);
  limits::check_spec(spec);  // C and the options in range, so that C·m and K·C cannot overflow
  // The declarations are the one list of layout names; an unknown name lists the known ones.
  if (layouts::find_declaration(spec.layout) != nullptr) return;
  std::vector<std::string> names;
  for (const layouts::LayoutDeclaration& d : layouts::declarations()) names.emplace_back(d.name);
  CPLAB_FAIL("unknown layout '{}'; known layouts: {}", spec.layout, fmt::join(names, ", "));
}

std::string spec_brief(const LayoutSpec& spec) {
  const LayoutSpec defaults;
  std::string brief = fmt::format("{} cp={}", spec.layout, spec.cp);
  // The layout options a spec holds, in the order the declarations list them (switches by name).
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    const std::int64_t value = o->of(spec);
    if (value == o->fallback) continue;
    brief += o->is_switch ? fmt::format(" {}", o->name) : fmt::format(" {}={}", o->name, value);
  }
  if (spec.microbatches != defaults.microbatches)
    brief += fmt::format(" microbatches={}", spec.microbatches);
  if (spec.shard_primary != defaults.shard_primary) brief += " shard_primary=false";
  if (spec.pad_policy != defaults.pad_policy) brief += " pad_policy=zero";
  if (spec.pad_token_id != defaults.pad_token_id)
    brief += fmt::format(" pad_token_id={}", spec.pad_token_id);
  return brief;
}

}  // namespace cplab
