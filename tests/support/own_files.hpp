#pragma once
// Which layout a file is one of the own files of, by the naming rule docs/design.md states: a
// file in a layouts/ folder whose name, up to its first dot, is the layout's identifier (its name
// with '-' as '_'), alone or followed by _map, _test or _mutants (thd.cpp, thd_map.hpp,
// thd_test.py, ptrr_mutants.cpp). The names rule and the table of own files read it alike.
#include <algorithm>
#include <filesystem>
#include <string>

namespace cplab::testsupport {

inline std::string layout_identifier(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The layout of `names` (any container of names) whose own file `file` is; "" for none.
template <typename Names>
std::string own_layout(const std::filesystem::path& file, const Names& names) {
  if (file.parent_path().filename() != "layouts") return {};
  std::string stem = file.filename().string();
  stem = stem.substr(0, stem.find('.'));
  for (const std::string suffix : {"_map", "_test", "_mutants"}) {
    if (stem.size() > suffix.size() &&
        stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
      stem.resize(stem.size() - suffix.size());
  }
  for (const std::string& name : names) {
    if (layout_identifier(name) == stem) return name;
  }
  return {};
}

}  // namespace cplab::testsupport
