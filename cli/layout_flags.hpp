#pragma once
// The flags every command that shows one row under a layout takes, added the same way everywhere:
// where the row comes from (--seq-len, --doc-lens, --batch, --row) and the layouts' own options
// (one flag per declared option: --pad-multiple, --chunk-size, ...).
#include <CLI/CLI.hpp>

#include "cli/layout_source.hpp"
#include "cli/option_flags.hpp"
#include "core/layout_spec.hpp"

namespace cplab::cli {

struct LayoutFlags {
  LayoutSpec spec;
  OptionFlags options;
  LayoutSourceArgs source;
  CLI::Option* seq_len = nullptr;
  CLI::Option* doc_lens = nullptr;
  CLI::Option* batch = nullptr;
  CLI::Option* row = nullptr;

  // The source arguments with what was given marked (after parsing).
  LayoutSourceArgs given() const;
};

// --seq-len, --doc-lens, --batch and --row into flags.source; row_help describes --row.
void add_row_flags(CLI::App* sub, LayoutFlags& flags, const char* row_help);
// Every declared layout option (option_flags.hpp) into flags.options.
void add_layout_option_flags(CLI::App* sub, LayoutFlags& flags);

}  // namespace cplab::cli
