// The README names every registered property and says how many mutants there are: a property or a
// mutant added without its line in the README fails here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "properties/implementation_registry.hpp"
#include "properties/property.hpp"

namespace cplab::properties {
namespace {

std::string readme() {
  std::ifstream in(std::string(CPLAB_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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

}  // namespace
}  // namespace cplab::properties
