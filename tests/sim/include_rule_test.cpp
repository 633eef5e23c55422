// docs/design.md: implementations under test (sim/, gpu/) include only the reference's vocabulary
// types (reference/types/*.hpp), never its algorithms. Greps every source file of those folders.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace cplab::simtest {
namespace {

namespace fs = std::filesystem;

// "file:line: include" for every reference include outside reference/types/ under `folder`.
std::vector<std::string> forbidden_includes(const fs::path& folder, int& files_scanned) {
  static const std::regex include(R"(^\s*#\s*include\s*[<"](reference/[^>"]*)[>"])");
  std::vector<std::string> found;
  if (!fs::exists(folder)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() ||
        (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh" && ext != ".h"))
      continue;
    ++files_scanned;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch match;
      if (std::regex_search(line, match, include) &&
          match[1].str().rfind("reference/types/", 0) != 0) {
        found.push_back(entry.path().string() + ":" + std::to_string(number) + ": " +
                        match[1].str());
      }
    }
  }
  return found;
}

TEST(IncludeRule, sim_and_gpu_include_only_reference_vocabulary) {
  const fs::path root = CPLAB_SOURCE_DIR;
  int sim_files = 0, gpu_files = 0;
  const auto in_sim = forbidden_includes(root / "sim", sim_files);
  const auto in_gpu = forbidden_includes(root / "gpu", gpu_files);
  EXPECT_GE(sim_files, 10) << "the scan found too few sim sources under " << root;
  EXPECT_TRUE(in_sim.empty()) << ::testing::PrintToString(in_sim);
  EXPECT_TRUE(in_gpu.empty()) << ::testing::PrintToString(in_gpu);
}

TEST(IncludeRule, the_pattern_catches_an_algorithm_include) {
  const fs::path folder =
      fs::temp_directory_path() / ("cplab_include_rule_probe_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  std::ofstream(folder / "probe.cpp")
      << "#include \"reference/types/tensor.hpp\"\n#include \"reference/plan.hpp\"\n";
  int scanned = 0;
  const auto found = forbidden_includes(folder, scanned);
  fs::remove_all(folder);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("probe.cpp:2: reference/plan.hpp"), std::string::npos) << found[0];
}

}  // namespace
}  // namespace cplab::simtest
