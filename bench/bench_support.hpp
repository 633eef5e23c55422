#pragma once
// What the benchmark suites share: one large row's partition per registered layout (from the
// sim's rank-local partition, the same metadata the implementations use), self-locating token
// values, the same-process baselines and the counters every benchmark reports.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/collective_math.hpp"
#include "core/shard_layout.hpp"

namespace cplab::bench {

// A row of `len` tokens on `cp` ranks, shaped as the layout's registry entry says it takes rows:
// BSHD where it takes them (magi with K = 512), else packed documents of varied lengths. Every
// rank's layout (index maps, caller positions, ...). A layout that is CP off runs on one rank.
struct RowPartition {
  std::string layout;
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;
  std::vector<ShardLayout> ranks;  // [C]
};
RowPartition partition_row(const std::string& layout, std::int64_t cp, std::int64_t len);

// Every layout of the registry, in its order.
std::vector<std::string> layout_names();

// The value element e of global token g holds: a wrong element says where it came from.
inline std::uint16_t token_bits(std::int64_t g, std::int64_t e) {
  return static_cast<std::uint16_t>((g * 7919 + e * 31 + 1) & 0xffff);
}
inline float token_value(std::int64_t g, std::int64_t e) {
  return static_cast<float>(g) + static_cast<float>(e % 1024) / 1024.0f;  // exact in float
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// This thread's CPU seconds (user + system, so page faults count). Single-threaded work and its
// baseline are timed with it: on a machine shared by many jobs wall time mostly measures the
// waits for a core, and a long operation waits more often than a short baseline.
double thread_cpu_seconds();
// The whole process's CPU seconds (every thread): for work spread over threads.
double process_cpu_seconds();

// GB/s of memcpy of `bytes` between two warm buffers (counted as read + write, like the token
// moves), the best of a few repeats; timed in wall seconds, or with `cpu_time` in this thread's
// CPU seconds (for work that is itself timed in CPU seconds).
double memcpy_gbps(std::int64_t bytes, bool cpu_time = false);

// A memcpy of `bytes` between two warm buffers, run once after every timed iteration of a
// benchmark so that both see the same machine (it is shared and noisy): gbps() is its GB/s at the
// median run, counted as read + write (medians: a preempted run does not move the ratio).
class InterleavedMemcpy {
 public:
  explicit InterleavedMemcpy(std::int64_t bytes);
  void run();
  double gbps() const;

 private:
  std::vector<std::byte> from_, to_;
  std::vector<double> seconds_;  // thread CPU seconds of each run
};

// Seconds of each timed iteration, for the medians.
double median_of(std::vector<double> values);

// The counters of a benchmark that moves bytes: bytes and items processed (per second, from the
// iterations), GB/s from the seconds the loop measured itself, and ratio_to_baseline against the
// baseline GB/s measured in the same process (1.0 = as fast as the baseline).
void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration,
                      std::int64_t items_per_iteration, double seconds, double baseline_gbps);
// The same from every iteration's seconds: GB/s at the median iteration.
void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration,
                      std::int64_t items_per_iteration,
                      const std::vector<double>& iteration_seconds, double baseline_gbps);

// The counters of a benchmark timed against a baseline doing the same job (or its lower bound):
// ratio_to_baseline = baseline seconds / own seconds per iteration (> 1: faster than it).
void report_ratio(benchmark::State& state, double seconds, double baseline_seconds_per_iteration);

// The counters of a collective as nccl-tests defines them, from the seconds of all its
// iterations: algbw_GB/s, busbw_GB/s, bytes and items processed, and ratio_to_baseline = busbw
// over the baseline's bytes per second (one memcpy's or cudaMemcpy's, baseline_gbps / 2).
void report_collective(benchmark::State& state, Collective what, std::size_t count, int cp,
                       double op_seconds, double baseline_gbps);

// The `items` count and rate counters without bytes (planning, assignment, sweep cases).
void report_items(benchmark::State& state, std::int64_t items_per_iteration);

}  // namespace cplab::bench
