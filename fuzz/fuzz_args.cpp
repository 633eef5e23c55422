// The argument layer every command runs before planning, fed from the fuzzer: lines of
// "layout", "cp", "layout options as key=value words, comma-separated (any layout's: m=3,K=8)",
// "case keys of options given as auto (K)", "--doc-lens or --seq-len text", "seed text". Each
// parser and check returns or throws cplab::Error; a row that passes the size checks stays within
// the limits; the error line stays one printable line whatever the text in it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/arguments.hpp"
#include "cli/errors.hpp"
#include "cli/layout_source.hpp"
#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"

namespace {

std::int64_t number(const std::string& text) {
  std::int64_t value = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9' || value > (INT64_MAX - 9) / 10) return -1;
    value = value * 10 + (ch - '0');
  }
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(sep, start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void check_one_line(const std::string& message) {
  const std::string line = cplab::escape_untrusted(message);
  for (unsigned char ch : line) {
    if (ch < 0x20 || ch == 0x7f) __builtin_trap();
  }
  if (line.size() > 1100) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (fields.size() < 6) {
    const std::size_t end = input.find('\n', start);
    fields.push_back(input.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  fields.resize(6);
  try {
    (void)cplab::cli::parse_seed("--seed", fields[5]);
  } catch (const cplab::Error& e) {
    check_one_line(e.what());
  }
  try {
    cplab::LayoutSpec spec;
    spec.layout = fields[0];
    spec.cp = number(fields[1]);
    for (const std::string& word : split(fields[2], ',')) {
      const std::size_t eq = word.find('=');
      const auto* option = cplab::layouts::option_keyed(word.substr(0, eq));
      CPLAB_CHECK(option != nullptr && eq != std::string::npos, "fuzz: no option '{}'", word);
      option->set(spec, number(word.substr(eq + 1)));
    }
    validate_spec(spec);
    std::int64_t len = 0, documents = 0;
    if (fields[4].find(',') != std::string::npos || fields[4].empty()) {
      const std::vector<std::int64_t> docs = cplab::cli::parse_doc_lens(fields[4]);
      len = cplab::limits::sum(docs, "--doc-lens");
      documents = static_cast<std::int64_t>(docs.size());
    } else {
      len = number(fields[4]);
    }
    // An automatic value from the row's S, as the commands apply one.
    for (const std::string& key : split(fields[3], ',')) {
      const auto* option = cplab::layouts::option_keyed(key);
      if (option == nullptr || option->automatic == nullptr || len < 0 || spec.cp < 1) continue;
      option->set(spec, option->automatic(len, spec.cp));
    }
    validate_spec(spec);
    const std::int64_t bound = cplab::limits::padded_len_bound(spec, len, documents);
    if (bound < len || bound > cplab::limits::kMaxPaddedLen) __builtin_trap();
  } catch (const cplab::Error& e) {
    check_one_line(e.what());
  }
  check_one_line(input);
  return 0;
}
