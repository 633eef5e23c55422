#pragma once
// What the caller asks for: which layout, on how many CP ranks, with which options.
#include <cstdint>
#include <string>
#include <vector>

namespace cplab {

enum class PadPolicy : std::uint8_t {
  spec,  // SPEC §2: ids ← pad token id, positions continue, labels IGNORE, masks off
  zero,  // Automodel's head-tail path: ids and positions padded with 0 (labels/masks as spec)
};

// One of a layout's own options as a spec holds it. The options are declared, with their
// defaults and ranges, in the layout's own declaration file (layouts/ID.cpp, see
// core/layout_option.hpp), and read and written through those declarations.
struct OptionValue {
  std::string name;
  std::int64_t value = 0;
  bool operator==(const OptionValue&) const = default;
};

// The layout a spec holds when its caller names none, as the one list says (core/layouts.def).
#define CPLAB_DEFAULT_LAYOUT(id) #id
inline constexpr const char* kDefaultLayout =
#include "core/layouts.def"
    ;
#undef CPLAB_DEFAULT_LAYOUT

struct LayoutSpec {
  std::string layout = kDefaultLayout;  // a name in the layout registries (core/layouts.def)
  std::int64_t cp = 1;                  // C, ranks in the CP group
  // Pipeline microbatches along the batch axis (SPEC §4; the case key "mb").
  std::int64_t microbatches = 1;
  bool shard_primary = true;  // false: input_ids / inputs_embeds stay global (SPEC §4)
  PadPolicy pad_policy = PadPolicy::spec;
  std::int64_t pad_token_id = 0;
  // The layouts' own options that differ from their declared defaults, in name order; only a
  // declaration (layouts::LayoutOption::set) writes them, so equal requests compare equal.
  std::vector<OptionValue> options;
  bool operator==(const LayoutSpec&) const = default;
};

// Throws on C out of range, microbatches < 1, an option out of its declared range and unknown
// layout names.
void validate_spec(const LayoutSpec& spec);
// "thd cp=4" plus what differs from the defaults (microbatches, padding, the layout's options).
std::string spec_brief(const LayoutSpec& spec);

}  // namespace cplab
