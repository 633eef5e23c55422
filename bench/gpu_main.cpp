// cplab_bench_gpu: the device suites (registered by their files' static initialisers), then Google
// Benchmark's own command line.
#include "bench/finite_json_reporter.hpp"

int main(int argc, char** argv) { return cplab::bench::run_benchmarks(argc, argv); }
