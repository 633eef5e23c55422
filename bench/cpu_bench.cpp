// Host suite: the sim's token moves (shard: local[k] = global[idx[k]]; gather: global[idx[k]] =
// local[k] for every rank) on one long row, against memcpy of the same bytes in this process.
#include <chrono>
#include <cstring>

#include "bench/bench_support.hpp"
#include "reference/types/token_moves.hpp"
#include "sim/layout_descriptor.hpp"

namespace cplab::bench {
namespace {

constexpr std::int64_t kLen = 1 << 15, kHidden = 512, kCp = 8;  // 32 MiB of 16-bit elements

Tensor located_row(std::int64_t len) {
  Tensor t(DType::bf16, {1, len, kHidden});
  auto* bits = reinterpret_cast<std::uint16_t*>(t.raw());
  for (std::int64_t g = 0; g < len; ++g) {
    for (std::int64_t e = 0; e < kHidden; ++e) bits[g * kHidden + e] = token_bits(g, e);
  }
  return t;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// GB/s of memcpy of `bytes` (counted as read + write, like the token moves).
double memcpy_gbps(std::int64_t bytes) {
  std::vector<std::byte> a(static_cast<std::size_t>(bytes), std::byte{1}),
      b(static_cast<std::size_t>(bytes));
  std::memcpy(b.data(), a.data(), a.size());  // fault the pages in before timing
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRepeats = 5;
  for (int i = 0; i < kRepeats; ++i) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::DoNotOptimize(b.data());
  }
  return 2.0 * static_cast<double>(bytes) * kRepeats / seconds_since(start) / 1e9;
}

void BM_host_memcpy(benchmark::State& state) {
  const std::int64_t bytes = kLen * kHidden * 2 / kCp;
  std::vector<std::byte> a(static_cast<std::size_t>(bytes), std::byte{1}),
      b(static_cast<std::size_t>(bytes));
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::DoNotOptimize(b.data());
    seconds += seconds_since(start);
  }
  report_bandwidth(state, 2 * bytes, seconds, memcpy_gbps(bytes));
  if (std::memcmp(a.data(), b.data(), a.size()) != 0)
    state.SkipWithError("memcpy copied wrong bytes");
}

void BM_host_shard(benchmark::State& state, const std::string& layout) {
  const RowPartition part = partition_row(layout, kCp, kLen);
  const Tensor global = located_row(part.padded_len);
  const RowMaps maps = {part.index[0]};
  const std::int64_t local = part.padded_len / kCp;
  Tensor out;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    out = take_tokens(global, 1, maps, local);
    benchmark::DoNotOptimize(out.raw());
    seconds += seconds_since(start);
  }
  const std::int64_t bytes = local * kHidden * 2;
  report_bandwidth(state, 2 * bytes, seconds, memcpy_gbps(bytes));
  const auto* bits = reinterpret_cast<const std::uint16_t*>(out.raw());
  for (std::int64_t k = 0; k < local; ++k) {
    for (std::int64_t e = 0; e < kHidden; ++e) {
      if (bits[k * kHidden + e] != token_bits(part.index[0][k], e)) {
        state.SkipWithError(
            ("shard: local token " + std::to_string(k) + " holds the wrong token").c_str());
        return;
      }
    }
  }
}

void BM_host_gather(benchmark::State& state, const std::string& layout) {
  const RowPartition part = partition_row(layout, kCp, kLen);
  const Tensor global = located_row(part.padded_len);
  const std::int64_t local = part.padded_len / kCp;
  // What every rank holds, concatenated in rank order as an all-gather leaves it.
  RowMaps gathered_slots(1);
  for (const auto& idx : part.index)
    gathered_slots[0].insert(gathered_slots[0].end(), idx.begin(), idx.end());
  const Tensor gathered = take_tokens(global, 1, gathered_slots, part.padded_len);
  Tensor out;
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    out = place_tokens(gathered, 1, gathered_slots, part.padded_len);
    benchmark::DoNotOptimize(out.raw());
    seconds += seconds_since(start);
  }
  const std::int64_t bytes = local * kCp * kHidden * 2;
  report_bandwidth(state, 2 * bytes, seconds, memcpy_gbps(bytes));
  if (!(out == global))
    state.SkipWithError("gather did not put every token back at its global slot");
}

const bool registered = [] {
  benchmark::RegisterBenchmark("BM_host_memcpy", BM_host_memcpy)->UseRealTime();
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    if (descriptor.cp_off) continue;  // one rank: nothing to shard or gather
    const std::string layout = descriptor.name;
    benchmark::RegisterBenchmark(("BM_host_shard/" + layout).c_str(), BM_host_shard, layout)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_host_gather/" + layout).c_str(), BM_host_gather, layout)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace cplab::bench
