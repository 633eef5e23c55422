// cplab_bench_cpu: every host suite, then Google Benchmark's own command line.
#include "bench/cpu_suites.hpp"
#include "bench/finite_json_reporter.hpp"

int main(int argc, char** argv) {
  cplab::bench::register_token_move_benchmarks();
  cplab::bench::register_loss_benchmarks();
  cplab::bench::register_planning_benchmarks();
  cplab::bench::register_collective_benchmarks();
  cplab::bench::register_sweep_benchmarks();
  cplab::bench::register_check_benchmarks();
  cplab::bench::register_attention_benchmarks();
  cplab::bench::register_process_benchmarks();
  cplab::bench::register_json_writer_benchmarks();
  return cplab::bench::run_benchmarks(argc, argv);
}
