// The sweep's throughput: cases per second of every property over every layout on sim (a
// slower generator or check shows here), and of the whole default sweep selection. The baseline
// is the throughput target (2 cores): 1000 cases/s for every property, 2000 for the default
// sweep, so ratio_to_baseline > 1 meets it.
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "properties/property.hpp"
#include "properties/sweep.hpp"

namespace cplab::bench {
namespace {

constexpr double kPropertyTarget = 1000.0, kDefaultTarget = 2000.0;

void BM_sweep(benchmark::State& state, const std::vector<std::string>& properties) {
  const double target = properties.empty() ? kDefaultTarget : kPropertyTarget;
  properties::SweepOptions options;
  options.cases = state.range(0);
  options.seed = 42;
  options.properties = properties;
  options.impls = {"sim"};
  properties::SweepReport report;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    report = properties::run_sweep(options);
    seconds += seconds_since(start);
  }
  const std::int64_t cases = report.total_cases();
  report_items(state, cases);
  const double rate =
      seconds > 0.0 ? static_cast<double>(cases) * static_cast<double>(state.iterations()) / seconds
                    : 0.0;
  state.counters["cases/s"] = rate;
  state.counters["ratio_to_baseline"] = rate / target;
  state.SetLabel(properties.empty() ? "baseline: 2000 cases/s target"
                                    : "baseline: 1000 cases/s target");
  if (!report.ok()) state.SkipWithError("sweep: a property failed");
}

}  // namespace

void register_sweep_benchmarks() {
  for (const std::string& property : properties::property_names()) {
    benchmark::RegisterBenchmark(("BM_sweep/" + property).c_str(), BM_sweep,
                                 std::vector<std::string>{property})
        ->ArgName("cases")
        ->Arg(100)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_sweep/default", BM_sweep, std::vector<std::string>{})
      ->ArgName("cases")
      ->Arg(properties::kDefaultCasesPerJob)
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
