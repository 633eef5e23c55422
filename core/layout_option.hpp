#pragma once
// What a caller may ask of a layout beyond C: its options, declared as data in the layout's own
// declaration file (layouts/ID.cpp), one LayoutOption each. Everything that takes, checks, prints,
// draws or searches options (validate_spec and the limits, spec_brief, the case format, every
// command's flags, the Python module's keywords, `layout --layout all`, `check --layout auto`)
// iterates these declarations, so a new option touches only its layout's files.
//
// Both implementations read an option's value through its declaration (option.of(spec)); the
// declarations are vocabulary, like LayoutSpec, so sim/ and gpu/ may include them.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/layout_spec.hpp"

namespace cplab::layouts {

struct LayoutOption {
  const char* name = nullptr;  // spec_brief, JSON and Python keyword: "pad_multiple"
  const char* key = nullptr;   // case key: "m"
  const char* flag = nullptr;  // command-line flag: "--pad-multiple"
  const char* help = nullptr;  // the flag's help, naming the layout: "contiguous: pad multiple m"
  const char* what = nullptr;  // what errors call it: "pad multiple m"
  std::int64_t fallback = 1;   // the default, what a spec holds when it says nothing
  std::int64_t least = 1;
  // The largest value at C (nullptr: limits::kMaxPadUnit / C). The bounds keep every product the
  // layout forms with C (C·m, K·C, C·g) inside cplab's limits.
  std::int64_t (*most)(std::int64_t cp) = nullptr;
  // 0 or 1, given as a flag without a value (`--chunk-pad-at-cp1`); the case prints `key=1`.
  bool is_switch = false;
  // The value `auto` stands for, from the row's S and C (`--chunk-size auto`, `K=auto`); nullptr:
  // the option has no automatic value.
  std::int64_t (*automatic)(std::int64_t seq_len, std::int64_t cp) = nullptr;
  // Its place in a case line: 0, printed in every case right after cp= (the first format's keys);
  // n >= 1, printed after seed= only when it differs from its default, in the order n the keys
  // joined the format, so that every case printed before it reads and prints the same.
  int case_order = 1;
  // The values `check --layout auto` tries for shards of `local` tokens on C ranks, the preferred
  // first; nullptr: the default alone.
  std::vector<std::int64_t> (*candidates)(std::int64_t cp, std::int64_t local) = nullptr;
  // The padding unit the value may make the layout pad a row to (limits::padded_len_bound takes
  // the largest of every option's and 2C); nullptr: it does not change the padding.
  std::int64_t (*pad_unit)(std::int64_t cp, std::int64_t value) = nullptr;

  std::int64_t of(const LayoutSpec& spec) const;         // the value spec holds, else the default
  void set(LayoutSpec& spec, std::int64_t value) const;  // held only while it is not the default
  void reset(LayoutSpec& spec) const { set(spec, fallback); }
  std::int64_t most_at(std::int64_t cp) const;
};

// What one layout declares: its name and its options.
struct LayoutDeclaration {
  const char* name = nullptr;
  std::span<const LayoutOption* const> options;
};

// Every declared layout, in name order (one per line of layouts.def); each was checked as it
// registered (a name, options with distinct names, keys and flags across all layouts).
const std::vector<LayoutDeclaration>& declarations();
// nullptr when no layout of that name is declared.
const LayoutDeclaration* find_declaration(std::string_view layout);
// The options `layout` declares (empty for an unknown name).
std::span<const LayoutOption* const> options_of(std::string_view layout);
// Every declared option of every layout, in case order (then name): the order the case format,
// spec_brief and the flags list them.
const std::vector<const LayoutOption*>& all_options();
const LayoutOption* option_named(std::string_view name);  // nullptr: none
const LayoutOption* option_keyed(std::string_view key);   // nullptr: none

// Every value spec holds is a declared option's, inside [least, most(C)]; throws a one-line
// cplab::Error naming the option otherwise. C must already be in range.
void check_options(const LayoutSpec& spec);
// The largest padding unit spec's own options may make its layout pad to (at least 2C).
std::int64_t pad_unit_bound(const LayoutSpec& spec);
// The spec with every option back at its default.
LayoutSpec without_options(LayoutSpec spec);

}  // namespace cplab::layouts
