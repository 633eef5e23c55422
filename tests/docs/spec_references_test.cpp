// Every "SPEC §n" in the tree names a section of docs/spec.md, and every "§9.n" / "§9 example n"
// a worked example there: a renumbered or deleted section fails here, naming the file and line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/source_dir.hpp"

namespace cplab::docstest {
namespace {

namespace fs = std::filesystem;

// "9" for "## 9. Worked examples", "9.6" for "### 9.6 magi, ...".
std::set<std::string> spec_sections(const fs::path& spec) {
  static const std::regex heading(R"(^#{2,3}\s+(\d+(?:\.\d+)?)[.\s])");
  std::set<std::string> found;
  std::ifstream in(spec);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, heading)) found.insert(match[1].str());
  }
  return found;
}

// The sections one line cites: "§4", "§4-§7" (each end), "§9.6", "§9 example 4", "§9 ex. 4",
// "§9's examples 1-6" (each of them), "SPEC example 5" (an example of §9).
std::vector<std::string> cited_sections(const std::string& line) {
  static const std::regex section(
      R"(§\s*(\d+)(?:\.(\d+))?(?:'s)?(?:\s+(?:worked\s+)?(?:examples?|ex\.)\s+(\d+)(?:\s*(?:-|–|and|to)\s*(\d+))?)?)");
  static const std::regex bare_example(R"(SPEC\s+examples?\s+(\d+))");
  std::vector<std::string> cited;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), section);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    cited.push_back(m[2].matched ? m[1].str() + "." + m[2].str() : m[1].str());
    if (m[3].matched) {
      const int first = std::stoi(m[3].str());
      const int last = m[4].matched ? std::stoi(m[4].str()) : first;
      for (int e = first; e <= last && e - first < 100; ++e)
        cited.push_back(m[1].str() + "." + std::to_string(e));
    }
  }
  for (auto it = std::sregex_iterator(line.begin(), line.end(), bare_example);
       it != std::sregex_iterator(); ++it)
    cited.push_back("9." + (*it)[1].str());
  return cited;
}

bool scanned_file(const fs::path& path) {
  static const std::set<std::string> extensions{".hpp", ".cpp", ".cu",    ".cuh",  ".h",
                                                ".md",  ".txt", ".cmake", ".json", ".py"};
  return extensions.count(path.extension().string()) != 0;
}

// Build folders, outputs and version control are not the project's text.
bool skipped_folder(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.empty() || name[0] == '.' || name.rfind("build", 0) == 0 || name == "out" ||
         name == "node_modules";
}

// "file:line: §n" for every citation under `root` that `sections` lacks.
std::vector<std::string> dangling_references(const fs::path& root,
                                             const std::set<std::string>& sections,
                                             int& citations) {
  std::vector<std::string> dangling;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && skipped_folder(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !scanned_file(it->path())) continue;
    std::ifstream in(it->path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      for (const std::string& cited : cited_sections(line)) {
        ++citations;
        if (sections.count(cited) == 0)
          dangling.push_back(fs::relative(it->path(), root).string() + ":" +
                             std::to_string(number) + ": §" + cited);
      }
    }
  }
  return dangling;
}

TEST(SpecReferences, every_citation_in_the_tree_resolves_in_docs_spec_md) {
  const fs::path root = cplab::source_dir();
  const std::set<std::string> sections = spec_sections(root / "docs" / "spec.md");
  ASSERT_GE(sections.size(), 13u) << "docs/spec.md has too few numbered sections under " << root;
  for (const char* expected : {"0", "3", "9", "9.1", "9.8"})
    EXPECT_EQ(sections.count(expected), 1u) << "docs/spec.md lacks section " << expected;
  int citations = 0;
  const auto dangling = dangling_references(root, sections, citations);
  EXPECT_GE(citations, 100) << "the scan found too few citations under " << root;
  std::string listed;
  for (const std::string& where : dangling) listed += "\n  " + where;
  EXPECT_TRUE(dangling.empty()) << "citations docs/spec.md does not have:" << listed;
}

TEST(SpecReferences, the_patterns_read_every_citation_form) {
  using Cited = std::vector<std::string>;
  EXPECT_EQ(cited_sections("(SPEC §2, §4-§7)"), (Cited{"2", "4", "7"}));
  EXPECT_EQ(cited_sections("SPEC §9.6: loads"), (Cited{"9.6"}));
  EXPECT_EQ(cited_sections("SPEC §9 example 4's bug"), (Cited{"9", "9.4"}));
  EXPECT_EQ(cited_sections("SPEC §9 ex. 4: 26 / 62"), (Cited{"9", "9.4"}));
  EXPECT_EQ(cited_sections("SPEC §9's examples 1-3"), (Cited{"9", "9.1", "9.2", "9.3"}));
  EXPECT_EQ(cited_sections("SPEC §9 examples 5 and 6"), (Cited{"9", "9.5", "9.6"}));
  EXPECT_EQ(cited_sections("SPEC example 5: ranks"), (Cited{"9.5"}));
  EXPECT_TRUE(cited_sections("no citation here").empty());
}

TEST(SpecReferences, a_dangling_citation_is_named_with_its_file_and_line) {
  const fs::path folder =
      fs::temp_directory_path() / ("cplab_spec_refs_probe_" + std::to_string(::getpid()));
  fs::create_directories(folder / "docs");
  std::ofstream(folder / "docs" / "spec.md") << "## 3. Layouts\n### 3.1 identity\n## 9. Examples\n";
  std::ofstream(folder / "probe.cpp") << "// SPEC §3\n// SPEC §3.1 and §9 example 2\n// §12\n";
  int citations = 0;
  const auto dangling =
      dangling_references(folder, spec_sections(folder / "docs" / "spec.md"), citations);
  fs::remove_all(folder);
  EXPECT_EQ(citations, 5);
  EXPECT_EQ(dangling, (std::vector<std::string>{"probe.cpp:2: §9.2", "probe.cpp:3: §12"}));
}

}  // namespace
}  // namespace cplab::docstest
