// The README names every registered property, says how many mutants there are and how many
// libFuzzer targets CI runs, and scripts/fuzz runs every target fuzz/ builds: a property, a mutant
// or a fuzz target added without its line fails here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/source_dir.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/property.hpp"

namespace cplab::properties {
namespace {

std::string source_text(const std::string& path) {
  std::ifstream in(std::string(cplab::source_dir()) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string readme() { return source_text("README.md"); }

TEST(ReadmeCounts, NamesEveryProperty) {
  const std::string text = readme();
  ASSERT_FALSE(text.empty());
  for (const std::string& name : property_names())
    EXPECT_NE(text.find("`" + name + "`"), std::string::npos) << name << " is not in README.md";
}

TEST(ReadmeCounts, CountsTheMutants) {
  const std::size_t mutants = implementation_names(true).size();
  EXPECT_NE(readme().find(fmt::format("| mutants | {} deliberately broken", mutants)),
            std::string::npos)
      << "README.md's implementation table should say " << mutants << " mutants";
}

// fuzz/fuzz_NAME.cpp is a target; scripts/fuzz names each in its list; the README says how many.
TEST(ReadmeCounts, CountsTheFuzzTargetsAndTheScriptRunsEach) {
  std::set<std::string> built;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(cplab::source_dir()) + "/fuzz")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fuzz_", 0) == 0 && entry.path().extension() == ".cpp")
      built.insert(name.substr(5, name.size() - 9));
  }
  ASSERT_GE(built.size(), 5u);
  std::smatch loop;
  const std::string script = source_text("scripts/fuzz");
  ASSERT_TRUE(std::regex_search(script, loop, std::regex("\ntargets=\"([a-z_ ]+)\"\n")));
  std::set<std::string> run;
  std::istringstream names(loop[1].str());
  for (std::string name; names >> name;) run.insert(name);
  EXPECT_EQ(run, built) << "scripts/fuzz must run every fuzz/fuzz_NAME.cpp";
  const char* words[] = {"zero", "one",   "two",   "three", "four", "five",
                         "six",  "seven", "eight", "nine",  "ten"};
  ASSERT_LT(built.size(), std::size(words));
  EXPECT_NE(readme().find(fmt::format("each of the {} libFuzzer targets", words[built.size()])),
            std::string::npos)
      << "README.md should say CI runs each of the " << words[built.size()] << " targets";
}

}  // namespace
}  // namespace cplab::properties
