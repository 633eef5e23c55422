#include "bench/bench_support.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "layouts/partition.hpp"
#include "properties/layout_table.hpp"

namespace cplab::bench {

std::vector<std::string> layout_names() { return properties::layout_table_names(); }

RowPartition partition_row(const std::string& layout, std::int64_t cp, std::int64_t len) {
  const properties::LayoutEntry& entry = properties::layout_entry(layout);
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = entry.descriptor->cp_off ? 1 : cp;
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  if (!entry.descriptor->bshd_rows) {
    // Documents of 1/2, 1/4, 1/8, ... of the row and a remainder, each room for padding to 2C.
    rows.packed = true;
    std::int64_t left = len - 4 * 2 * spec.cp;
    for (std::int64_t part = len / 2; part >= 64 && left > 0; part /= 2) {
      const std::int64_t n = std::min(part - 3, left);
      rows.seq_lens.push_back(n);
      left -= n + 2 * spec.cp;
    }
  }
  RowPartition out;
  out.layout = layout;
  out.cp = spec.cp;
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    out.ranks.push_back(sim::partition_rank(spec, r, rows));
    out.padded_len = out.ranks.back().padded_len;
  }
  return out;
}

double memcpy_gbps(std::int64_t bytes, bool cpu_time) {
  std::vector<std::byte> a(static_cast<std::size_t>(bytes), std::byte{1}),
      b(static_cast<std::size_t>(bytes));
  std::memcpy(b.data(), a.data(), a.size());  // fault the pages in before timing
  double best = 0.0;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
    const double seconds = cpu_time ? thread_cpu_seconds() - cpu_start : seconds_since(start);
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds / 1e9);
  }
  return best;
}

InterleavedMemcpy::InterleavedMemcpy(std::int64_t bytes)
    : from_(static_cast<std::size_t>(bytes), std::byte{1}), to_(static_cast<std::size_t>(bytes)) {
  std::memcpy(to_.data(), from_.data(), from_.size());  // fault the pages in
}

void InterleavedMemcpy::run() {
  const double start = thread_cpu_seconds();
  std::memcpy(to_.data(), from_.data(), from_.size());
  benchmark::DoNotOptimize(to_.data());
  benchmark::ClobberMemory();
  seconds_.push_back(thread_cpu_seconds() - start);
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double InterleavedMemcpy::gbps() const {
  const double s = median_of(seconds_);
  return s > 0.0 ? 2.0 * static_cast<double>(from_.size()) / s / 1e9 : 0.0;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration,
                      std::int64_t items_per_iteration,
                      const std::vector<double>& iteration_seconds, double baseline_gbps) {
  const double per_iteration = median_of(iteration_seconds);
  report_bandwidth(state, bytes_per_iteration, items_per_iteration,
                   per_iteration * static_cast<double>(state.iterations()), baseline_gbps);
}

void report_items(benchmark::State& state, std::int64_t items_per_iteration) {
  state.SetItemsProcessed(items_per_iteration * static_cast<std::int64_t>(state.iterations()));
}

void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration,
                      std::int64_t items_per_iteration, double seconds, double baseline_gbps) {
  const double bytes =
      static_cast<double>(bytes_per_iteration) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  report_items(state, items_per_iteration);
  const double gbps = seconds > 0.0 ? bytes / seconds / 1e9 : 0.0;
  state.counters["GB/s"] = gbps;
  state.counters["baseline_GB/s"] = baseline_gbps;
  state.counters["ratio_to_baseline"] = baseline_gbps > 0.0 ? gbps / baseline_gbps : 0.0;
}

void report_ratio(benchmark::State& state, double seconds, double baseline_seconds_per_iteration) {
  const double per_iteration =
      state.iterations() > 0 ? seconds / static_cast<double>(state.iterations()) : 0.0;
  state.counters["baseline_seconds"] = baseline_seconds_per_iteration;
  state.counters["ratio_to_baseline"] =
      per_iteration > 0.0 ? baseline_seconds_per_iteration / per_iteration : 0.0;
}

void report_collective(benchmark::State& state, Collective what, std::size_t count, int cp,
                       double op_seconds, double baseline_gbps) {
  const double size = algbw_bytes(what, count, cp);
  const double per_op = op_seconds / static_cast<double>(state.iterations());
  const double algbw = per_op > 0.0 ? size / per_op / 1e9 : 0.0;
  state.SetBytesProcessed(static_cast<std::int64_t>(size) * state.iterations());
  report_items(state, static_cast<std::int64_t>(size / 4));
  state.counters["algbw_GB/s"] = algbw;
  state.counters["busbw_GB/s"] = algbw * bus_factor(what, cp);
  const double memcpy_bytes_per_s = baseline_gbps / 2.0;
  state.counters["baseline_GB/s"] = memcpy_bytes_per_s;
  state.counters["ratio_to_baseline"] = algbw * bus_factor(what, cp) / memcpy_bytes_per_s;
}

}  // namespace cplab::bench
