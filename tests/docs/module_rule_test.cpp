// docs/design.md's modules table is the dependency rule: each module folder includes only the
// folders its row names in the last column ("everything" for bench/, fuzz/ and tests/). This test
// reads the table and greps every `#include "folder/..."` of every source file against it, so the
// drawing and the code cannot drift apart: a new folder without its row, or an include its row does
// not name (sim/ reaching into the reference's algorithms, say), fails here with file and line.
// A row may name one file kind instead of a folder: `layouts/ID.hpp`, a layout's option header
// (ID a layout of core/layouts.def), which the reference reads and nothing else of layouts/.
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
#include <vector>

#include "core/source_dir.hpp"

namespace cplab::docs {
namespace {

namespace fs = std::filesystem;

// folder ("sim/", "gpu/host/") -> the folders it may include; "*" alone: any; "layouts/ID.hpp":
// the option header of any layout in that folder.
using Rules = std::map<std::string, std::set<std::string>>;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the "## Modules and their order" table: first cell a `folder/`, last cell the
// `folder/`s it may include (other text there, such as the external libraries, is not read).
Rules rules_from_design(const std::string& design) {
  Rules rules;
  const std::size_t start = design.find("## Modules and their order");
  if (start == std::string::npos) return rules;
  const std::size_t end = design.find("\n## ", start + 1);
  std::istringstream section(design.substr(start, end - start));
  static const std::regex row(R"(^\| `([a-z_/]+/)` \|.*\| ([^|]*) \|\s*$)");
  static const std::regex folder("`([a-z_/]+/)`");
  static const std::regex option_header("`([a-z_/]+/)ID\\.hpp`");
  std::string line;
  while (std::getline(section, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, row)) continue;
    std::set<std::string>& allowed = rules[match[1].str()];
    const std::string uses = match[2].str();
    if (uses.rfind("everything", 0) == 0) allowed.insert("*");
    for (std::sregex_iterator it(uses.begin(), uses.end(), folder), done; it != done; ++it)
      allowed.insert((*it)[1].str());
    for (std::sregex_iterator it(uses.begin(), uses.end(), option_header), done; it != done; ++it)
      allowed.insert((*it)[1].str() + "ID.hpp");
  }
  return rules;
}

// The module a path belongs to: the longest folder of the table it lies in ("" for none).
std::string module_of(const Rules& rules, const std::string& path) {
  std::string best;
  for (const auto& [folder, allowed] : rules)
    if (path.rfind(folder, 0) == 0 && folder.size() > best.size()) best = folder;
  return best;
}

bool is_source(const fs::path& path) {
  static const std::set<std::string> kinds = {".hpp", ".cpp", ".h", ".cu", ".cuh"};
  return kinds.count(path.extension().string()) > 0;
}

// The layouts of the one list under root (core/layouts.def): the IDs an option header may have.
std::set<std::string> layout_ids(const fs::path& root) {
  std::set<std::string> ids;
  const std::string list = read_text(root / "core/layouts.def");
  static const std::regex line(R"(^CPLAB_LAYOUT\(([a-z0-9_]+)\))");
  std::istringstream in(list);
  std::string text;
  while (std::getline(in, text)) {
    std::smatch match;
    if (std::regex_search(text, match, line)) ids.insert(match[1].str());
  }
  return ids;
}

// Whether `target` (in module `theirs`) is a layout's option header that `may` allows.
bool allowed_option_header(const std::set<std::string>& may, const std::string& theirs,
                           const std::string& target, const std::set<std::string>& ids) {
  if (may.count(theirs + "ID.hpp") == 0) return false;
  const std::string file = target.substr(theirs.size());
  const std::string stem = file.size() > 4 ? file.substr(0, file.size() - 4) : "";
  return file.ends_with(".hpp") && ids.count(stem) > 0;
}

struct Scan {
  int files = 0;
  std::set<std::string> modules_seen;
  std::vector<std::string> broken;  // "file:line: includes X, which its row does not name"
};

// Every project include of every source under root's module folders, against the rules. An
// include of a top-level folder the table does not list (a new module without its row) is broken
// too; system and third-party headers (<...>, and "..." without a folder the tree has) are not
// read.
Scan scan(const fs::path& root, const Rules& rules) {
  static const std::regex include(R"(^\s*#\s*include\s*"([a-z_]+/[^"]*)\")");
  Scan out;
  const std::set<std::string> ids = layout_ids(root);
  for (const auto& [folder, allowed] : rules) {
    if (folder.find('/') != folder.size() - 1) continue;  // nested rows are walked from their top
    const fs::path top = root / folder;
    if (!fs::is_directory(top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(top)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const std::string path = fs::relative(entry.path(), root).generic_string();
      const std::string mine = module_of(rules, path);
      const std::set<std::string>& may = rules.at(mine);
      ++out.files;
      out.modules_seen.insert(mine);
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        std::smatch match;
        if (!std::regex_search(line, match, include)) continue;
        const std::string target = match[1].str();
        const std::string top_folder = target.substr(0, target.find('/') + 1);
        if (!fs::is_directory(root / top_folder)) continue;  // not one of the tree's folders
        const std::string theirs = module_of(rules, target);
        if (theirs == mine || may.count("*") > 0) continue;
        if (allowed_option_header(may, theirs, target, ids)) continue;
        if (theirs.empty() || may.count(theirs) == 0) {
          out.broken.push_back(path + ":" + std::to_string(number) + ": includes " + target +
                               (theirs.empty() ? " (a folder the modules table does not list)"
                                               : ", which the row of " + mine + " does not name"));
        }
      }
    }
  }
  return out;
}

TEST(ModuleRule, EveryIncludeIsOneTheModulesTableAllows) {
  const fs::path root = cplab::source_dir();
  const Rules rules = rules_from_design(read_text(root / "docs/design.md"));
  // The table is read: the modules the project has are all there, each with its row.
  for (const char* folder :
       {"core/", "comm/", "layouts/", "attention/", "reference/", "io/", "implementation/", "sim/",
        "check/", "gpu/host/", "gpu/", "mpi/", "perf/", "properties/", "reports/", "cli/",
        "python/", "bench/", "tests/"})
    EXPECT_EQ(rules.count(folder), 1u) << folder << " has no row in design.md's modules table";
  ASSERT_GE(rules.size(), 19u);
  EXPECT_EQ(rules.at("sim/").count("reference/"), 0u) << "sim/ may never use the reference";
  EXPECT_EQ(rules.at("gpu/").count("reference/"), 0u) << "gpu/ may never use the reference";
  EXPECT_EQ(rules.at("reference/").count("layouts/"), 0u)
      << "the reference reads a layout's option header only, never the layouts' model";
  EXPECT_EQ(rules.at("reference/").count("layouts/ID.hpp"), 1u);
  EXPECT_EQ(rules.at("core/").size(), 0u) << "core/ is the bottom: it includes no other module";
  const Scan found = scan(root, rules);
  EXPECT_GE(found.files, 300) << "the scan found too few sources under " << root;
  EXPECT_GE(found.modules_seen.size(), 15u);
  EXPECT_TRUE(found.broken.empty()) << ::testing::PrintToString(found.broken);
}

// Every folder at the top of the tree that holds sources has its row (a module added without
// one would otherwise be scanned by nobody).
TEST(ModuleRule, EveryTopLevelSourceFolderHasARow) {
  const fs::path root = cplab::source_dir();
  const Rules rules = rules_from_design(read_text(root / "docs/design.md"));
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.empty() || name[0] == '.' || name.rfind("build", 0) == 0)
      continue;
    bool has_sources = false;
    for (const auto& inner : fs::recursive_directory_iterator(entry.path()))
      if (inner.is_regular_file() && is_source(inner.path())) has_sources = true;
    if (has_sources) {
      EXPECT_EQ(rules.count(name + "/"), 1u) << name << "/ has no row";
    }
  }
}

// The scan can fail: a probe tree whose sim/ includes the reference's plan, whose new/ folder has
// no row, and whose reference/ reads a layout's option header (allowed) and the layouts' model
// (not) is reported at exactly the three includes its rows do not name.
TEST(ModuleRule, TheScanCatchesAnIncludeItsRowDoesNotName) {
  const fs::path root =
      fs::temp_directory_path() / ("cplab_module_rule_probe_" + std::to_string(::getpid()));
  for (const char* folder : {"core", "layouts", "reference", "sim", "new"})
    fs::create_directories(root / folder);
  std::ofstream(root / "core/layouts.def") << "CPLAB_LAYOUT(zig)\n";
  std::ofstream(root / "sim/probe.cpp") << "#include \"core/tensor.hpp\"\n"
                                           "#include \"reference/plan.hpp\"\n"
                                           "#include \"new/thing.hpp\"\n"
                                           "#include <vector>\n";
  std::ofstream(root / "reference/probe.cpp") << "#include \"layouts/zig.hpp\"\n"
                                                 "#include \"layouts/partition.hpp\"\n"
                                                 "#include \"layouts/zag.hpp\"\n";
  const Rules rules = rules_from_design(
      "## Modules and their order\n\n| folder | owns | may include |\n|---|---|---|\n"
      "| `core/` | types | fmt |\n"
      "| `layouts/` | the model | `core/` |\n"
      "| `reference/` | algorithms | `core/`; a layout's option header `layouts/ID.hpp` only |\n"
      "| `sim/` | the twin | `core/`, `layouts/` |\n\n## Next\n");
  ASSERT_EQ(rules.size(), 4u);
  const Scan found = scan(root, rules);
  fs::remove_all(root);
  ASSERT_EQ(found.broken.size(), 4u) << ::testing::PrintToString(found.broken);
  const std::string all = ::testing::PrintToString(found.broken);
  EXPECT_NE(all.find("reference/probe.cpp:2: includes layouts/partition.hpp"), std::string::npos)
      << all;
  EXPECT_NE(all.find("reference/probe.cpp:3: includes layouts/zag.hpp"), std::string::npos)
      << "not a layout of the one list: " << all;
  EXPECT_EQ(all.find("layouts/zig.hpp"), std::string::npos) << all;
  EXPECT_NE(all.find("sim/probe.cpp:2: includes reference/plan.hpp"), std::string::npos) << all;
  EXPECT_NE(all.find("sim/probe.cpp:3: includes new/thing.hpp (a folder"), std::string::npos)
      << all;
}

}  // namespace
}  // namespace cplab::docs
