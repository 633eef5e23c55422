// docs/design.md's table of what each layout owns is the tree's: for every registered layout, the
// files of its row (brace forms such as `layouts/magi.{hpp,cpp}` expanded) are exactly the files
// under a layouts/ folder whose stem is the layout's identifier (ID.*, ID_map.*, ID_mutants.*,
// ID_test.*), so a layout's new file, or one that moved or went, cannot leave the table stale.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/layout_option.hpp"
#include "core/source_dir.hpp"
#include "tests/support/own_files.hpp"

namespace cplab::docs {
namespace {

namespace fs = std::filesystem;
using Files = std::map<std::string, std::set<std::string>>;  // layout name → its files

using testsupport::layout_identifier;

// The layout (by name) whose own file `relative` is, "" for none.
std::string owner_of(const fs::path& relative, const std::set<std::string>& names) {
  return testsupport::own_layout(relative, names);
}

// Every layout's own files under root, skipping build trees (a CMakeCache.txt), installed
// packages and hidden folders.
Files files_in_tree(const fs::path& root, const std::set<std::string>& names) {
  Files out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string leaf = it->path().filename().string();
    if (it->is_directory() && (leaf[0] == '.' || leaf == "node_modules" || leaf == "__pycache__" ||
                               fs::exists(it->path() / "CMakeCache.txt"))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const fs::path relative = fs::relative(it->path(), root);
    const std::string owner = owner_of(relative, names);
    if (!owner.empty()) out[owner].insert(relative.generic_string());
  }
  return out;
}

// "a/b.{hpp,cpp}" → {"a/b.hpp", "a/b.cpp"}; anything else stands for itself.
std::set<std::string> expanded(const std::string& path) {
  static const std::regex brace(R"(^(.*)\{([^}]*)\}(.*)$)");
  std::smatch m;
  if (!std::regex_match(path, m, brace)) return {path};
  std::set<std::string> out;
  std::stringstream parts(m[2].str());
  for (std::string part; std::getline(parts, part, ',');)
    out.insert(m[1].str() + part + m[3].str());
  return out;
}

// The rows `| \`NAME\` | \`file\`, \`file\` ... |` of the table that follows "What each layout
// owns" in design.md.
Files files_in_table(const std::string& design, const std::set<std::string>& names) {
  Files out;
  const std::size_t start = design.find("What each layout owns");
  if (start == std::string::npos) return out;
  std::istringstream section(design.substr(start));
  static const std::regex row(R"(^\| `([a-z0-9-]+)` \| (.*) \|\s*$)");
  static const std::regex file("`([^`]+)`");
  std::string line;
  bool in_table = false;
  while (std::getline(section, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) {
      if (in_table && line.rfind('|', 0) != 0) break;  // the table ended
      continue;
    }
    in_table = true;
    if (names.count(m[1].str()) == 0) continue;
    std::set<std::string>& files = out[m[1].str()];
    const std::string cells = m[2].str();
    for (std::sregex_iterator f(cells.begin(), cells.end(), file), done; f != done; ++f) {
      for (const std::string& one : expanded((*f)[1].str())) files.insert(one);
    }
  }
  return out;
}

std::set<std::string> registered_names() {
  std::set<std::string> names;
  for (const layouts::LayoutDeclaration& d : layouts::declarations()) names.insert(d.name);
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LayoutFilesTable, design_md_lists_exactly_each_layouts_own_files) {
  const fs::path root = cplab::source_dir();
  const std::set<std::string> names = registered_names();
  ASSERT_GE(names.size(), 5u);
  const Files table = files_in_table(read_text(root / "docs" / "design.md"), names);
  const Files tree = files_in_tree(root, names);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(table.count(name)) << "design.md's table has no row for " << name;
    const std::set<std::string>& listed = table.at(name);
    const std::set<std::string> present =
        tree.count(name) ? tree.at(name) : std::set<std::string>{};
    for (const std::string& f : present)
      EXPECT_TRUE(listed.count(f)) << f << " is " << name << "'s own file but not in its row";
    for (const std::string& f : listed)
      EXPECT_TRUE(present.count(f))
          << name << "'s row lists " << f << ", which is not its own file";
  }
}

// The test's own reading: a planted tree and table where one file is missing from a row, one
// row lists a file that is not there, and a build tree holds a file of the same shape.
TEST(LayoutFilesTable, the_comparison_sees_a_missing_and_a_stale_entry) {
  const std::set<std::string> registered = registered_names();
  ASSERT_GE(registered.size(), 3u);
  auto name = registered.begin();
  const std::string one = *name++, two = *name++, unlisted = *name;  // any three layouts
  const std::string id = layout_identifier(one);
  const fs::path root =
      fs::temp_directory_path() / ("cplab_layout_table_probe_" + std::to_string(::getpid()));
  fs::create_directories(root / "reference" / "layouts");
  fs::create_directories(root / "build" / "x" / "layouts");
  std::ofstream(root / "build" / "CMakeCache.txt") << "\n";
  std::ofstream(root / "build" / "x" / "layouts" / (id + ".cpp.o")) << "\n";
  std::ofstream(root / "reference" / "layouts" / (id + ".cpp")) << "\n";
  std::ofstream(root / "reference" / "layouts" / (id + "_map.hpp")) << "\n";
  std::ofstream(root / "reference" / "layouts" / (id + "_kinds.cpp"))
      << "\n";  // not an own-file stem
  const std::set<std::string> names = {one, two};
  const Files tree = files_in_tree(root, names);
  fs::remove_all(root);
  ASSERT_EQ(tree.size(), 1u);
  EXPECT_EQ(tree.at(one), (std::set<std::string>{"reference/layouts/" + id + ".cpp",
                                                 "reference/layouts/" + id + "_map.hpp"}));
  const Files table = files_in_table("What each layout owns\n\n| layout | files |\n|---|---|\n| `" +
                                         one + "` | `reference/layouts/" + id + ".cpp`, `layouts/" +
                                         id + ".{hpp,cpp}` |\n| `" + two +
                                         "` | none |\n\nafter\n| `" + unlisted + "` | `x` |\n",
                                     registered);
  EXPECT_EQ(table.at(one),
            (std::set<std::string>{"reference/layouts/" + id + ".cpp", "layouts/" + id + ".hpp",
                                   "layouts/" + id + ".cpp"}));
  EXPECT_TRUE(table.at(two).empty());
  EXPECT_EQ(table.count(unlisted), 0u) << "a row after the table ended was read";
}

}  // namespace
}  // namespace cplab::docs
