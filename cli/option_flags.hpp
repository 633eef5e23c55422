#pragma once
// Every layout's own options as command-line flags, one per declaration (layouts/ID.cpp):
// `--pad-multiple m`, `--chunk-size K|auto`, `--chunk-pad-at-cp1`, `--ring-degree R`, ... Every
// command that plans a row under a layout takes them the same way, so a new option is a flag of
// every such command without touching any of them.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/layout_option.hpp"
#include "core/layout_spec.hpp"

namespace cplab::cli {

struct OptionFlags {
  struct Flag {
    const layouts::LayoutOption* option = nullptr;
    std::string text;  // as given: a number, or auto where the option has an automatic value
    bool on = false;   // a switch
    CLI::Option* cli = nullptr;
  };
  std::vector<Flag> flags;  // one per declared option, in layouts::all_options() order

  bool given(const layouts::LayoutOption& option) const;
  // Whether an option was given as auto (its value then follows the row's S).
  bool automatic() const;
};

void add_option_flags(CLI::App* sub, OptionFlags& flags);
// spec with every given option applied; an automatic value needs the row length S (seq_len).
// Throws a one-line cplab::Error on a value that is neither an integer nor (where the option has
// one) auto.
LayoutSpec apply_option_flags(LayoutSpec spec, const OptionFlags& flags, std::int64_t seq_len);

}  // namespace cplab::cli
