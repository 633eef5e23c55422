// Every property holds on sim for every layout, for a modest budget of random cases. A failure
// prints the shrunk case and the command that replays it.
#include <gtest/gtest.h>

#include "properties/runner.hpp"
#include "tests/properties/test_seed.hpp"

namespace cplab::properties {
namespace {

struct SuiteParam {
  std::string property, layout;
};

// ctest names carry the parameter: print it readably.
void PrintTo(const SuiteParam& param, std::ostream* os) {
  *os << param.property << " on " << param.layout;
}

class SuiteOnSim : public ::testing::TestWithParam<SuiteParam> {};

TEST_P(SuiteOnSim, HoldsOnRandomCases) {
  const JobSpec job{&find_property(GetParam().property), &layout_entry(GetParam().layout),
                    &find_implementation("sim")};
  RunOptions options;
  options.cases = test_cases(25);
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  EXPECT_EQ(result.status, JobStatus::passed) << result.message << "\nreplay: " << result.replay;
  EXPECT_EQ(result.cases, options.cases);
}

std::vector<SuiteParam> all_pairs() {
  std::vector<SuiteParam> pairs;
  for (const std::string& property : property_names()) {
    for (const std::string& layout : layout_table_names()) pairs.push_back({property, layout});
  }
  return pairs;
}

INSTANTIATE_TEST_SUITE_P(Every, SuiteOnSim, ::testing::ValuesIn(all_pairs()),
                         [](const auto& param_info) {
                           std::string name =
                               param_info.param.property + "_" + param_info.param.layout;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace cplab::properties
