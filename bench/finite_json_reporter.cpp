#include "bench/finite_json_reporter.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>

namespace cplab::bench {
namespace {

using Run = benchmark::BenchmarkReporter::Run;

bool finite_times(const Run& run) {
  return std::isfinite(run.real_accumulated_time) && std::isfinite(run.cpu_accumulated_time);
}

// The value of a Google Benchmark flag as it will read it: the last --name=VALUE on the command
// line, else the environment variable NAME (upper case), else "".
std::string flag_value(int argc, char** argv, std::string_view name) {
  std::string value;
  std::string env_name;
  for (char c : name) env_name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* env = std::getenv(env_name.c_str()); env != nullptr) value = env;
  const std::string prefix = "--" + std::string(name) + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, prefix.size()) == prefix) value = arg.substr(prefix.size());
  }
  return value;
}

}  // namespace

std::vector<Run> finite_runs(const std::vector<Run>& runs) {
  std::vector<Run> out;
  out.reserve(runs.size());
  for (const Run& run : runs) {
    Run copy = run;
    for (auto it = copy.counters.begin(); it != copy.counters.end();) {
      it = std::isfinite(it->second.value) ? std::next(it) : copy.counters.erase(it);
    }
    if (!finite_times(copy)) {
      // A derived statistic that is undefined: the repetitions it summarises are all written.
      if (copy.run_type == Run::RT_Aggregate) continue;
      if (!copy.error_occurred) {
        copy.error_occurred = true;
        copy.error_message = "its time is not a finite number";
      }
      copy.real_accumulated_time = 0.0;
      copy.cpu_accumulated_time = 0.0;
    }
    out.push_back(std::move(copy));
  }
  return out;
}

void FiniteJsonReporter::ReportRuns(const std::vector<Run>& runs) {
  JSONReporter::ReportRuns(finite_runs(runs));
  GetOutputStream().flush();
}

int run_benchmarks(int argc, char** argv) {
  // Read before Initialize, which removes the flags it knows from argv.
  const bool json_file = !flag_value(argc, argv, "benchmark_out").empty() &&
                         (flag_value(argc, argv, "benchmark_out_format").empty() ||
                          flag_value(argc, argv, "benchmark_out_format") == "json");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  FiniteJsonReporter file;
  if (json_file) {
    benchmark::RunSpecifiedBenchmarks(nullptr, &file);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace cplab::bench
