// The registry of layout declarations, made from the one list (layouts.def), and the generic
// handling of the options they declare.
#include "core/layout_option.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace cplab::layouts {

#define CPLAB_LAYOUT(id) extern const LayoutDeclaration id##_declaration;
#include "core/layouts.def"
#undef CPLAB_LAYOUT

namespace {

// Names, keys and flags are how callers, cases and commands pick an option: each one names one
// option of one layout, across all layouts.
void check_distinct(const std::vector<LayoutDeclaration>& all) {
  std::map<std::string, std::string> seen;  // "name x" / "key x" / "flag x" → its layout
  for (std::size_t i = 0; i < all.size(); ++i) {
    const LayoutDeclaration& d = all[i];
    CPLAB_CHECK(d.name != nullptr && d.name[0] != '\0', "layout declaration {} has no name", i);
    CPLAB_CHECK(i == 0 || std::strcmp(all[i - 1].name, d.name) < 0,
                "layout '{}' is declared twice or out of name order in layouts.def", d.name);
    for (const LayoutOption* o : d.options) {
      CPLAB_CHECK(o != nullptr && o->name && o->key && o->flag && o->help && o->what,
                  "layout '{}' declares an option without a name, key, flag, help or what", d.name);
      CPLAB_CHECK(o->least <= o->fallback && o->fallback <= o->most_at(1),
                  "layout '{}': option {}'s default {} is outside its own range", d.name, o->name,
                  o->fallback);
      CPLAB_CHECK(!o->is_switch || (o->least == 0 && o->most != nullptr && o->most(1) == 1),
                  "layout '{}': switch {} must range over 0 and 1", d.name, o->name);
      for (const std::string& id : {std::string("name ") + o->name, std::string("key ") + o->key,
                                    std::string("flag ") + o->flag}) {
        const auto [it, fresh] = seen.emplace(id, d.name);
        CPLAB_CHECK(fresh, "option {} of layout '{}' is already layout '{}''s", id, d.name,
                    it->second);
      }
    }
  }
  CPLAB_CHECK(std::any_of(all.begin(), all.end(),
                          [](const LayoutDeclaration& d) {
                            return std::strcmp(d.name, kDefaultLayout) == 0;
                          }),
              "the default layout '{}' (layouts.def) is not a declared layout", kDefaultLayout);
}

}  // namespace

std::int64_t LayoutOption::of(const LayoutSpec& spec) const {
  for (const OptionValue& v : spec.options) {
    if (v.name == name) return v.value;
  }
  return fallback;
}

void LayoutOption::set(LayoutSpec& spec, std::int64_t value) const {
  auto& held = spec.options;
  const auto at =
      std::lower_bound(held.begin(), held.end(), std::string_view(name),
                       [](const OptionValue& v, std::string_view n) { return v.name < n; });
  const bool present = at != held.end() && at->name == name;
  if (value == fallback) {
    if (present) held.erase(at);
  } else if (present) {
    at->value = value;
  } else {
    held.insert(at, OptionValue{name, value});
  }
}

std::int64_t LayoutOption::most_at(std::int64_t cp) const {
  return most != nullptr ? most(cp) : limits::kMaxPadUnit / std::max<std::int64_t>(cp, 1);
}

const std::vector<LayoutDeclaration>& declarations() {
  static const std::vector<LayoutDeclaration> all = [] {
    std::vector<LayoutDeclaration> out = {
#define CPLAB_LAYOUT(id) id##_declaration,
#include "core/layouts.def"
#undef CPLAB_LAYOUT
    };
    check_distinct(out);
    return out;
  }();
  return all;
}

const LayoutDeclaration* find_declaration(std::string_view layout) {
  for (const LayoutDeclaration& d : declarations()) {
    if (layout == d.name) return &d;
  }
  return nullptr;
}

std::span<const LayoutOption* const> options_of(std::string_view layout) {
  const LayoutDeclaration* d = find_declaration(layout);
  return d != nullptr ? d->options : std::span<const LayoutOption* const>{};
}

const std::vector<const LayoutOption*>& all_options() {
  static const std::vector<const LayoutOption*> all = [] {
    std::vector<const LayoutOption*> out;
    for (const LayoutDeclaration& d : declarations())
      out.insert(out.end(), d.options.begin(), d.options.end());
    std::stable_sort(out.begin(), out.end(), [](const LayoutOption* a, const LayoutOption* b) {
      return a->case_order < b->case_order;
    });
    return out;
  }();
  return all;
}

const LayoutOption* option_named(std::string_view name) {
  for (const LayoutOption* o : all_options()) {
    if (name == o->name) return o;
  }
  return nullptr;
}

const LayoutOption* option_keyed(std::string_view key) {
  for (const LayoutOption* o : all_options()) {
    if (key == o->key) return o;
  }
  return nullptr;
}

void check_options(const LayoutSpec& spec) {
  for (const OptionValue& v : spec.options) {
    const LayoutOption* o = option_named(v.name);
    CPLAB_CHECK(o != nullptr, "unknown layout option '{}'", v.name);
    const std::int64_t most = o->most_at(spec.cp);
    CPLAB_CHECK(v.value >= o->least && v.value <= most,
                "{} must be in [{}, {}] at cp={}, got {}={}", o->what, o->least, most, spec.cp,
                o->name, v.value);
  }
}

std::int64_t pad_unit_bound(const LayoutSpec& spec) {
  std::int64_t unit = 2 * spec.cp;
  for (const LayoutOption* o : options_of(spec.layout)) {
    if (o->pad_unit != nullptr) unit = std::max(unit, o->pad_unit(spec.cp, o->of(spec)));
  }
  return unit;
}

LayoutSpec without_options(LayoutSpec spec) {
  spec.options.clear();
  return spec;
}

}  // namespace cplab::layouts
