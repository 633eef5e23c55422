// Every property holds on the GPU implementations, for every layout (ctest label `gpu`). Where
// gpu/ is not built or no device can be used, each test is skipped with the implementation's own
// reason: never a vacuous pass.
#include <gtest/gtest.h>

#include "properties/runner.hpp"
#include "tests/properties/test_seed.hpp"

namespace cplab::properties {
namespace {

struct GpuParam {
  std::string impl, property, layout;
};

void PrintTo(const GpuParam& param, std::ostream* os) {
  *os << param.property << " on " << param.layout << " by " << param.impl;
}

class SuiteOnGpu : public ::testing::TestWithParam<GpuParam> {};

TEST_P(SuiteOnGpu, HoldsOnRandomCases) {
  const ImplementationInfo& impl = find_implementation(GetParam().impl);
  const std::string why = unavailable_reason(impl);
  if (!why.empty()) GTEST_SKIP() << impl.name << ": " << why;
  const JobSpec job{&find_property(GetParam().property), &layout_entry(GetParam().layout), &impl};
  RunOptions options;
  options.cases = test_cases(25);
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  EXPECT_EQ(result.status, JobStatus::passed) << result.message << "\nreplay: " << result.replay;
}

std::vector<GpuParam> all_gpu_jobs() {
  std::vector<GpuParam> jobs;
  for (const char* impl : {"gpu", "gpu-nccl", "gpu-host"}) {
    for (const std::string& property : property_names()) {
      for (const std::string& layout : layout_table_names())
        jobs.push_back({impl, property, layout});
    }
  }
  return jobs;
}

INSTANTIATE_TEST_SUITE_P(Every, SuiteOnGpu, ::testing::ValuesIn(all_gpu_jobs()),
                         [](const auto& param_info) {
                           std::string name = param_info.param.impl + "_" +
                                              param_info.param.property + "_" +
                                              param_info.param.layout;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace cplab::properties
