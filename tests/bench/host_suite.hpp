#pragma once
// The real host benchmark suite run through `cplab bench run`, and what its JSON file must be:
// JSON as written (no NaN, no Infinity), whole, no value null, every benchmark's own output check
// passed, every iteration with its ratio and its items per second.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.hpp"

namespace cplab::testsupport {

// The first benchmark of each family of the host suite (bench/): every kind of counter there is.
inline constexpr const char* kOneOfEachFamily =
    "^(BM_host_memcpy|BM_host_strided_copy|BM_host_shard/contiguous/bf16|BM_host_gather/"
    "contiguous/bf16|BM_cpu_shifted_ce/threads:1/|BM_plan/contiguous/4096/|BM_reference_plan/"
    "contiguous/4096/|BM_magi_assign/1000/|BM_comm_[a-z_]+/C:2/"
    "|BM_sweep/index_maps|BM_check_auto/65536/|BM_cpu_ring_attention/threads:2/|BM_cplab_process/"
    "help/|BM_json_writer/1048576/)";
// How many families those are: memcpy, strided copy, shard, gather, shifted CE, plan, reference
// plan, magi assign, four collectives, sweep, check auto, ring attention, process, JSON writer.
inline constexpr int kBenchmarkFamilies = 17;

struct HostSuiteRun {
  CliRun run;
};

inline HostSuiteRun run_host_suite(const std::string& args, const std::string& out) {
  return {run_cplab("bench run --suite cpu --min-time 0.001 " + args + " --out " + out)};
}

inline void expect_valid_host_suite_json(const HostSuiteRun& suite, const std::string& out,
                                         int least_iterations, int least_aggregates) {
  ASSERT_EQ(suite.run.status, 0) << suite.run.err;
  EXPECT_EQ(suite.run.err.find("not finite"), std::string::npos) << suite.run.err;
  EXPECT_FALSE(std::filesystem::exists(out + ".cpu.part"));
  const nlohmann::json doc = nlohmann::json::parse(slurp(out));  // strict: no NaN, no Infinity
  EXPECT_TRUE(doc["context"]["cplab"]["complete"].get<bool>());
  int checked = 0, aggregates = 0;
  for (const auto& b : doc["benchmarks"]) {
    for (const auto& [field, value] : b.items()) {
      EXPECT_FALSE(value.is_null()) << b.value("name", "") << ": " << field;
    }
    if (b.value("run_type", "") == "aggregate") ++aggregates;
    if (b.value("run_type", "") != "iteration") continue;
    ++checked;
    EXPECT_FALSE(b.value("error_occurred", false)) << b.value("name", "") << ": " << b.dump();
    EXPECT_TRUE(b.contains("ratio_to_baseline")) << b.value("name", "");
    EXPECT_TRUE(b.contains("items_per_second")) << b.value("name", "");
  }
  EXPECT_GE(checked, least_iterations);
  EXPECT_GE(aggregates, least_aggregates);
}

}  // namespace cplab::testsupport
