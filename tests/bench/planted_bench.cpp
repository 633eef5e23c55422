// A benchmark executable with one known cost, for testing `cplab bench` end to end: it copies a
// buffer CPLAB_PLANTED_SLOWDOWN times per iteration (default 1) against an interleaved memcpy of
// the same buffer, so a slowdown of 2 halves its ratio_to_baseline and doubles its time.
// Planted faults, each switched on by its variable, for the ways a suite can fail `bench run`:
//   CPLAB_PLANTED_ZERO=1   a counter that is 0 in every repetition (its `cv` aggregate is 0 / 0)
//   CPLAB_PLANTED_LABEL=T  a second benchmark labelled T (a control byte makes the JSON invalid:
//                          Google Benchmark writes labels unescaped)
//   CPLAB_PLANTED_CRASH=1  a second benchmark that aborts the process
//   CPLAB_PLANTED_BLOCK=1  a second benchmark that waits until the process is stopped by a signal
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"
#include "bench/finite_json_reporter.hpp"

namespace {

constexpr std::int64_t kBytes = 1 << 20;

bool planted(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0';
}

void BM_planted_copy(benchmark::State& state) {
  const char* env = std::getenv("CPLAB_PLANTED_SLOWDOWN");
  const int slowdown = env != nullptr ? std::max(1, std::atoi(env)) : 1;
  std::vector<std::byte> a(kBytes, std::byte{7}), b(kBytes);
  cplab::bench::InterleavedMemcpy baseline(kBytes);
  std::vector<double> seconds;
  for (auto _ : state) {
    const double start = cplab::bench::thread_cpu_seconds();
    for (int i = 0; i < slowdown; ++i) {
      std::memcpy(b.data(), a.data(), a.size());
      benchmark::ClobberMemory();
    }
    seconds.push_back(cplab::bench::thread_cpu_seconds() - start);
    baseline.run();
  }
  cplab::bench::report_bandwidth(state, 2 * kBytes, kBytes, seconds, baseline.gbps());
  if (planted("CPLAB_PLANTED_ZERO")) state.counters["zero"] = 0.0;
  if (std::memcmp(a.data(), b.data(), a.size()) != 0) state.SkipWithError("copy went wrong");
}
BENCHMARK(BM_planted_copy)->MeasureProcessCPUTime();

void BM_planted_second(benchmark::State& state) {
  for (auto _ : state) {
    if (planted("CPLAB_PLANTED_CRASH")) std::abort();
    if (planted("CPLAB_PLANTED_BLOCK")) ::pause();
  }
  if (const char* label = std::getenv("CPLAB_PLANTED_LABEL"); label != nullptr)
    state.SetLabel(label);
}

}  // namespace

int main(int argc, char** argv) {
  if (planted("CPLAB_PLANTED_LABEL") || planted("CPLAB_PLANTED_CRASH") ||
      planted("CPLAB_PLANTED_BLOCK")) {
    benchmark::RegisterBenchmark("BM_planted_second", BM_planted_second)->Iterations(1);
  }
  return cplab::bench::run_benchmarks(argc, argv);
}
