// A benchmark executable with one known cost, for testing `cplab bench` end to end: it copies a
// buffer CPLAB_PLANTED_SLOWDOWN times per iteration (default 1) against an interleaved memcpy of
// the same buffer, so a slowdown of 2 halves its ratio_to_baseline and doubles its time.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"

namespace {

constexpr std::int64_t kBytes = 1 << 20;

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
  if (std::memcmp(a.data(), b.data(), a.size()) != 0) state.SkipWithError("copy went wrong");
}
BENCHMARK(BM_planted_copy)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
