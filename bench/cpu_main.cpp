// cplab_bench_cpu: every host suite, then Google Benchmark's own command line.
#include <benchmark/benchmark.h>

#include "bench/cpu_suites.hpp"

int main(int argc, char** argv) {
  cplab::bench::register_token_move_benchmarks();
  cplab::bench::register_loss_benchmarks();
  cplab::bench::register_planning_benchmarks();
  cplab::bench::register_collective_benchmarks();
  cplab::bench::register_sweep_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
