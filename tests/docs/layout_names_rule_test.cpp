// DESIGN.md, layouts as data: outside a layout's own files nothing compares a layout's name,
// switches on a layout kind or lists layouts by name (two names or more on one line: a suite or a
// rule written out where the registry should be iterated), and no string holds a layout's name as
// a value (a whole literal, a --layout value, a case line's head); code reads the layout's
// descriptor and property entry instead. Greps every code file of every folder that holds code
// (kCodeFolders: the modules, python/, bench/, fuzz/, tests/, scripts/, cmake/ and .ci/) for the
// names every registry holds.
// A layout's own files are those under a layouts/ folder named after it (thd.cpp, thd_map.hpp,
// ptrr_mutants.cpp; tests/support/own_files.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/source_dir.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"
#include "tests/support/own_files.hpp"

namespace cplab::docs {
namespace {

namespace fs = std::filesystem;

// Every layout name any registry knows, so a new layout is covered the moment it registers.
std::vector<std::string> layout_names() {
  std::set<std::string> names;
  for (const std::string& name : reference::layout_names()) names.insert(name);
  for (const std::string& name : sim::layout_descriptor_names()) names.insert(name);
  return {names.begin(), names.end()};
}

using testsupport::own_layout;

using testsupport::layout_identifier;

// Every top-level folder that holds code, scanned by both rules (the comparison rule reads its
// C++ files, the value rule every code file).
constexpr const char* kCodeFolders[] = {
    "core",           "comm",    "layouts", "attention", "reference", "io",
    "implementation", "sim",     "check",   "gpu",       "mpi",       "perf",
    "properties",     "reports", "cli",     "python",    "bench",     "fuzz",
    "tests",          "scripts", "cmake",   ".ci"};

// Every report of `rule` over kCodeFolders under the source tree.
template <typename Rule>
std::vector<std::string> scan_tree(const Rule& rule, const std::vector<std::string>& names,
                                   int& scanned) {
  std::vector<std::string> found;
  for (const char* folder : kCodeFolders) {
    const auto here = rule(fs::path(cplab::source_dir()) / folder, names, scanned);
    found.insert(found.end(), here.begin(), here.end());
  }
  return found;
}

struct Patterns {
  std::vector<std::pair<std::string, std::regex>> per_name;  // (layout, pattern)
  std::vector<std::pair<std::string, std::regex>> literals;  // (layout, "layout" or 'layout')
  std::regex layout_compared{R"(\.layout(\(\))?\s*(==|!=)|(==|!=)\s*\w+\.layout\b(?!s))"};
  std::regex enum_start{R"(\benum\b(\s+(class|struct))?\s+\w+)"};
  std::regex layouts_paired{R"(\w+\.layout(\(\))?\s*(==|!=)\s*(\w+\.layout\b(?!s)|at::k\w+))"};
};

Patterns patterns_for(const std::vector<std::string>& names) {
  Patterns p;
  for (const std::string& name : names) {
    const std::string quoted =
        "\"" + std::regex_replace(name, std::regex(R"([-])"), R"(\-)") + "\"";
    const std::string id = layout_identifier(name);
    // A name literal next to == / != (either side, std::string(...) or not), strcmp'd, or a kind
    // enumerator of that name used as a value (case MapKind::thd, Kind::head_tail).
    p.literals.emplace_back(
        name,
        std::regex("[\"']" + std::regex_replace(name, std::regex(R"([-])"), R"(\-)") + "[\"']"));
    p.per_name.emplace_back(name, std::regex("(==|!=)\\s*(std::string(_view)?\\()?" + quoted + "|" +
                                             quoted + "\\)?\\s*(==|!=)|strcmp\\([^;]*" + quoted +
                                             "|\\b\\w+::" + id + "\\b(?!_)"));
  }
  return p;
}

// "file:line: text" for every comparison of a layout name or switch on a layout kind under
// `folder`, outside the layouts' own files.
std::vector<std::string> violations(const fs::path& folder, const std::vector<std::string>& names,
                                    int& files_scanned) {
  const Patterns p = patterns_for(names);
  std::vector<std::string> found;
  if (!fs::exists(folder)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() ||
        (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh" && ext != ".h"))
      continue;
    if (entry.path().filename() == "layout_names_rule_test.cpp") continue;  // quotes the patterns
    ++files_scanned;
    const std::string own = own_layout(entry.path(), names);
    std::ifstream in(entry.path());
    std::string line;
    bool in_enum = false;
    for (int number = 1; std::getline(in, line); ++number) {
      // The attention algorithms (SPEC §13) are not layouts, though one of them shares the usp
      // layout's name (yunchang's USP): AttentionAlgo::usp and its enum say nothing of a layout.
      std::string code = std::regex_replace(line.substr(0, line.find("//")),
                                            std::regex(R"(\bAttentionAlgo::\w+)"), "");
      // Two specs' layouts compared with each other name no layout (the auto search's "same
      // candidate?"), and a torch tensor's layout() is its memory layout (at::kStrided).
      code = std::regex_replace(code, p.layouts_paired, "");
      const bool algo_enum = code.find("enum class AttentionAlgo") != std::string::npos;
      const std::string at = entry.path().string() + ":" + std::to_string(number) + ": " + line;
      bool bad = own.empty() && std::regex_search(code, p.layout_compared);
      if (std::regex_search(code, p.enum_start)) in_enum = !algo_enum;
      for (const auto& [name, pattern] : p.per_name) {
        if (name == own) continue;
        const bool enumerator =
            in_enum && std::regex_search(code, std::regex("\\b" + layout_identifier(name) + "\\b"));
        bad = bad || enumerator || std::regex_search(code, pattern);
      }
      // A literal list of layouts ({"thd", "magi"}: two names or more on one line) is a suite or a
      // rule written out where the registry should be iterated or the layouts' own files asked.
      int listed = 0;
      bool foreign = false;
      for (const auto& [name, literal] : p.literals) {
        if (!std::regex_search(code, literal)) continue;
        ++listed;
        foreign = foreign || name != own;
      }
      bad = bad || (listed >= 2 && foreign);
      if (bad) found.push_back(at);  // one report per line
      if (in_enum && code.find('}') != std::string::npos) in_enum = false;
    }
  }
  return found;
}

// Where a string names a layout by its name outside the layout's own files: the whole literal
// ("thd", 'thd'), a command line's --layout / --layouts value ("--layout thd --cp 2",
// "--layouts thd,magi"), a case line's head ("thd cp=2 docs=5") or a keyword (layout=thd). A
// generic test asks the registry for a layout by kind and builds the string from its name; a
// test about one layout lives in that layout's own file. Prose that mentions a layout (a
// message, a docstring sentence) does not hold it as a value and is not read.
struct Literals {
  std::regex strings{R"re("((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')re"};
  std::vector<std::pair<std::string, std::regex>> uses;  // (layout, pattern inside a string)
};

Literals literals_for(const std::vector<std::string>& names) {
  Literals l;
  for (const std::string& name : names) {
    const std::string n = std::regex_replace(name, std::regex(R"([-])"), R"(\-)");
    l.uses.emplace_back(
        name, std::regex("^" + n + "$|--layouts?[ =]([\\w-]+,)*" + n + "($|[^\\w-])|(^|[\\s'\"])" +
                         n + " cp=|layout\\s*=\\s*" + n + "($|[^\\w-])"));
  }
  return l;
}

// The names that are something else's too, each where it means the other thing, with why.
struct NotALayout {
  const char* file_suffix;
  const char* name;
  const char* line_holds;
};
constexpr NotALayout kNotALayout[] = {
    // The attention algorithm USP (SPEC §13, yunchang's name) is not the usp layout.
    {"core/attention_algo.cpp", "usp", "return \"usp\";"},
    // TransformerEngine's qkv_format "thd" (check_attention's q, k, v of packed rows, in any
    // file) names a tensor format, not the thd layout.
    {"", "thd", "qkv_format"},
};

bool means_something_else(const fs::path& file, const std::string& name, const std::string& line) {
  const std::string path = file.generic_string();
  for (const NotALayout& e : kNotALayout) {
    const std::string suffix = e.file_suffix;
    if (name == e.name && path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        line.find(e.line_holds) != std::string::npos)
      return true;
  }
  return false;
}

bool is_code(const fs::path& file) {
  static const std::set<std::string> kinds = {".hpp", ".cpp", ".cu",  ".cuh",   ".h",
                                              ".py",  ".sh",  ".txt", ".cmake", ".def"};
  const std::string ext = file.extension().string();
  if (ext == ".txt") return file.filename() == "CMakeLists.txt";
  if (kinds.count(ext) > 0) return true;
  // Scripts without an extension (scripts/hostile-inputs, .ci/run) are code too.
  if (!ext.empty()) return false;
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  return first.rfind("#!", 0) == 0;
}

// "file:line: text" for every string holding a layout's name as a value (Literals) outside that
// layout's own files, in every code file under `folder` (C++, Python, shell, CMake).
std::vector<std::string> literal_violations(const fs::path& folder,
                                            const std::vector<std::string>& names,
                                            int& files_scanned) {
  const Literals l = literals_for(names);
  std::vector<std::string> found;
  if (!fs::exists(folder)) return found;
  for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& path = it->path();
    const std::string leaf = path.filename().string();
    if (it->is_directory() && (leaf == "node_modules" || leaf == "__pycache__" || leaf[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_code(path)) continue;
    // The one list, and this file, which quotes the patterns.
    if (leaf == "layouts.def" || leaf == "layout_names_rule_test.cpp") continue;
    ++files_scanned;
    const std::string own = own_layout(path, names);
    const std::string ext = path.extension().string();
    const bool hash_comments =
        ext == ".py" || ext == ".sh" || ext == ".txt" || ext == ".cmake" || ext.empty();
    std::ifstream in(path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      const std::size_t lead = line.find_first_not_of(" \t");
      if (lead == std::string::npos) continue;
      if (hash_comments && line[lead] == '#') continue;
      if (!hash_comments && line.compare(lead, 1, "#") == 0 &&
          line.find("include", lead) != std::string::npos)
        continue;  // an #include's path names a header, not a layout
      const std::string code = hash_comments ? line : line.substr(0, line.find("//"));
      bool bad = false;
      for (std::sregex_iterator s(code.begin(), code.end(), l.strings), done; s != done; ++s) {
        const std::string text = (*s)[1].matched ? (*s)[1].str() : (*s)[2].str();
        for (const auto& [name, use] : l.uses) {
          if (name == own || !std::regex_search(text, use)) continue;
          bad = bad || !means_something_else(path, name, line);
        }
      }
      if (bad) found.push_back(path.string() + ":" + std::to_string(number) + ": " + line);
    }
  }
  return found;
}

// Each planted line ("file:line:") is among the reports.
void expect_reported(const std::vector<std::string>& found,
                     std::initializer_list<const char*> planted) {
  for (const char* where : planted) {
    EXPECT_TRUE(
        std::any_of(found.begin(), found.end(),
                    [&](const std::string& f) { return f.find(where) != std::string::npos; }))
        << where << " not reported: " << ::testing::PrintToString(found);
  }
}

TEST(LayoutNamesRule, nothing_outside_a_layouts_files_holds_its_name_as_a_value) {
  const fs::path root = cplab::source_dir();
  const std::vector<std::string> names = layout_names();
  ASSERT_GE(names.size(), 5u);
  int scanned = 0;
  const std::vector<std::string> found = scan_tree(literal_violations, names, scanned);
  EXPECT_GE(scanned, 300) << "the scan found too few code files under " << root;
  EXPECT_TRUE(found.empty()) << found.size() << " strings name a layout outside its own files:\n"
                             << ::testing::PrintToString(found);
}

TEST(LayoutNamesRule, the_value_patterns_catch_names_in_strings_but_not_prose_or_own_files) {
  const fs::path folder =
      fs::temp_directory_path() / ("cplab_layout_value_probe_" + std::to_string(::getpid()));
  fs::create_directories(folder / "layouts");
  std::ofstream(folder / "probe.cpp")
      << "spec.layout = \"thd\";\n"                              // 1
      << "run(\"layout --layout head-tail --cp 2\");\n"          // 2
      << "run(\"sweep --layouts identity,magi --impl sim\");\n"  // 3
      << "parse_case(\"per-doc-head-tail cp=2 docs=8,4\");\n"    // 4
      << "const char* m = \"a row the thd layout refuses\";  // prose\n"
      << "#include \"layouts/magi.hpp\"\n"
      << "// run(\"--layout thd\") in a comment\n"
      << "run(\"--layout head-tailed --algo usp\");\n"
      << "x(\"t.contiguous()\");\n";
  std::ofstream(folder / "probe.py") << "plan('stripe', 2)\n"  // probe.py:1
                                     << "# plan('stripe', 2)\n"
                                     << "f(layout=thd)\n"
                                     << "run(f\"replay 'usp cp=4 R=2'\")\n";  // probe.py:4
  std::ofstream(folder / "layouts" / "thd_test.cpp") << "run(\"--layout thd --cp 2\");\n";
  std::ofstream(folder / "layouts" / "magi_test.py") << "run('--layout thd')\n";  // 5
  int scanned = 0;
  const auto found = literal_violations(folder, layout_names(), scanned);
  fs::remove_all(folder);
  EXPECT_EQ(scanned, 4);
  ASSERT_EQ(found.size(), 7u) << ::testing::PrintToString(found);
  expect_reported(found, {"probe.cpp:1:", "probe.cpp:2:", "probe.cpp:3:", "probe.cpp:4:",
                          "probe.py:1:", "probe.py:4:", "magi_test.py:1:"});
}

TEST(LayoutNamesRule, nothing_outside_a_layouts_files_compares_its_name_or_switches_on_it) {
  const fs::path root = cplab::source_dir();
  const std::vector<std::string> names = layout_names();
  ASSERT_GE(names.size(), 5u);
  int scanned = 0;
  const std::vector<std::string> found = scan_tree(violations, names, scanned);
  EXPECT_GE(scanned, 100) << "the scan found too few sources under " << root;
  EXPECT_TRUE(found.empty()) << found.size() << " violations:\n" << ::testing::PrintToString(found);
}

TEST(LayoutNamesRule, the_patterns_catch_comparisons_and_switches_but_not_a_layouts_own_file) {
  const fs::path folder =
      fs::temp_directory_path() / ("cplab_layout_rule_probe_" + std::to_string(::getpid()));
  fs::create_directories(folder / "layouts");
  std::ofstream(folder / "probe.cpp") << "if (spec.layout == \"thd\") return;\n"         // 1
                                      << "const bool b = \"magi\" != name;\n"            // 2
                                      << "switch (kind) { case MapKind::head_tail: }\n"  // 3
                                      << "enum class Kind { contiguous, other };\n"      // 4
                                      << "if (stream.layout != wanted) return;\n"        // 5
                                      << "spec.layout = \"thd\";  // choosing is fine\n"
                                      << "if (alias.layout == leader.layout) return;\n"
                                      << "CHECK(t.layout() == at::kStrided);\n"
                                      << "// a comment may say spec.layout == \"thd\"\n"
                                      << "for (auto l : {\"thd\", \"magi\"}) run(l);\n";  // 7
  std::ofstream(folder / "layouts" / "thd.cpp") << "if (name == \"thd\") return;\n";
  std::ofstream(folder / "layouts" / "magi.cpp") << "if (name == \"thd\") return;\n";  // 6
  int scanned = 0;
  const auto found = violations(folder, layout_names(), scanned);
  fs::remove_all(folder);
  EXPECT_EQ(scanned, 3);
  ASSERT_EQ(found.size(), 7u) << ::testing::PrintToString(found);
  expect_reported(found, {"probe.cpp:1:", "probe.cpp:2:", "probe.cpp:3:", "probe.cpp:4:",
                          "probe.cpp:5:", "magi.cpp:1:", "probe.cpp:10:"});
}

// One name per layout (core/layout_name.hpp): every registry's name is the identifier of its
// layouts.def line with '-' for '_', and the files that register a layout (its declaration and
// descriptor, its reference construction, its property entry) never spell that name: they take it
// from the list with CPLAB_LAYOUT_NAME, so a layout cannot be renamed in one registry only.
TEST(LayoutNamesRule, each_layout_has_one_name_made_from_its_identifier) {
  std::vector<std::string> ids;
  {
    std::ifstream def(std::string(cplab::source_dir()) + "/core/layouts.def");
    const std::regex line_rule(R"(^CPLAB_LAYOUT\(([a-z0-9_]+)\))");
    std::smatch m;
    for (std::string line; std::getline(def, line);) {
      if (std::regex_search(line, m, line_rule)) ids.push_back(m[1].str());
    }
  }
  ASSERT_GE(ids.size(), 5u);
  std::vector<std::string> made;
  for (std::string id : ids) {
    std::replace(id.begin(), id.end(), '_', '-');
    made.push_back(id);
  }
  std::sort(made.begin(), made.end());
  EXPECT_EQ(reference::layout_names(), made);
  EXPECT_EQ(sim::layout_descriptor_names(), made);
  for (const std::string& id : ids) {
    std::string name = id;
    std::replace(name.begin(), name.end(), '_', '-');
    for (const std::string& file : {"layouts/" + id + ".cpp", "reference/layouts/" + id + ".cpp",
                                    "properties/layouts/" + id + ".cpp"}) {
      std::ifstream in(std::string(cplab::source_dir()) + "/" + file);
      ASSERT_TRUE(in.good()) << file;
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(text.str().find("\"" + name + "\""), std::string::npos)
          << file << " spells its layout's name; take it from the list: CPLAB_LAYOUT_NAME(" << id
          << ")";
      EXPECT_NE(text.str().find("CPLAB_LAYOUT_NAME(" + id + ")"), std::string::npos) << file;
    }
  }
}

}  // namespace
}  // namespace cplab::docs
