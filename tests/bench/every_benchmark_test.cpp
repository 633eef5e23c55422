// Every benchmark of the host suite, three times, so that every counter is aggregated (mean,
// median, stddev, cv): the file must be JSON as it is written, with no value missing. About five
// minutes on 2 cores: the nightly check (ctest label slow, scripts/nightly); CI runs one
// benchmark of each family (bench_cli_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/bench/host_suite.hpp"

namespace cplab {
namespace {

TEST(BenchRunNightly, every_host_benchmark_repeated_checks_its_output_and_writes_valid_json) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("cplab_bench_every." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "host.json").string();
  // All but the whole default sweep and the 16M-token process runs (a minute and seconds each,
  // three times over; the baselines run them): their counters are those of their siblings.
  const testsupport::HostSuiteRun run = testsupport::run_host_suite(
      "--repetitions 3 --filter '-(BM_cplab_process/.*16M|BM_sweep/default)'", out);
  testsupport::expect_valid_host_suite_json(run, out, 3 * 50, 4 * 50);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cplab
