// Device suite, data movement: shard (local[k] = global[idx[k]], idx from the device's closed-form
// map) and gather (global[g] = gathered[owner(g)]) of one long row, against cudaMemcpy.
#include "bench/gpu_bench.hpp"

#include <vector>

#include "bench/bench_layouts.hpp"
#include "gpu/impl/device_layout.hpp"
#include "gpu/kernels/copy_tokens.hpp"
#include "gpu/kernels/index_map.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::bench {
namespace {

constexpr std::int64_t kCp = 8;

void BM_cuda_memcpy(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const std::int64_t bytes = state.range(0);
  gpu::DeviceBuffer a(static_cast<std::size_t>(bytes)), b(static_cast<std::size_t>(bytes));
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = time_on_device(nullptr, [&] {
      CPLAB_CUDA_CHECK(
          cudaMemcpyAsync(b.get(), a.get(), a.bytes(), cudaMemcpyDeviceToDevice, nullptr));
    });
    state.SetIterationTime(s);
    seconds += s;
  }
  report_bandwidth(state, 2 * bytes, bytes, seconds, cuda_memcpy_gbps(bytes));
}

// The global row on the device, every 16-bit element self-locating.
gpu::DeviceBuffer located_row(std::int64_t len, std::int64_t hidden) {
  std::vector<std::uint16_t> host(static_cast<std::size_t>(len * hidden));
  for (std::int64_t g = 0; g < len; ++g) {
    for (std::int64_t e = 0; e < hidden; ++e) host[g * hidden + e] = token_bits(g, e);
  }
  return gpu::upload_vector(host, nullptr);
}

gpu::TokenCopy row_copy(std::int64_t hidden) {
  return {.outer = 1, .rows = 1, .src_rows = 1, .token_bytes = 2 * hidden, .element_bytes = 2};
}

void BM_gpu_shard(benchmark::State& state, const std::string& layout) {
  if (skip_without_device(state)) return;
  const std::int64_t len = state.range(0), hidden = state.range(1);
  const RowPartition part = partition_row(layout, kCp, len);
  const gpu::DeviceLayout device_layout(part.ranks[0], 0,
                                        nullptr);  // index map computed on the device
  const std::int64_t local = part.padded_len / kCp;
  const gpu::DeviceBuffer global = located_row(part.padded_len, hidden);
  gpu::DeviceBuffer out(static_cast<std::size_t>(local * hidden * 2));
  gpu::TokenCopy c = row_copy(hidden);
  c.src = global.get();
  c.dst = out.get();
  c.src_tokens = part.padded_len;
  c.dst_tokens = local;
  c.source = device_layout.index();
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = time_on_device(nullptr, [&] { gpu::copy_tokens(c, nullptr); });
    state.SetIterationTime(s);
    seconds += s;
  }
  const std::int64_t bytes = local * hidden * 2;
  report_bandwidth(state, 2 * bytes, bytes / (2 * hidden), seconds, cuda_memcpy_gbps(bytes));
  const auto bits =
      gpu::download_vector<std::uint16_t>(out, static_cast<std::size_t>(local * hidden), nullptr);
  for (std::int64_t k = 0; k < local; ++k) {
    for (std::int64_t e = 0; e < hidden; ++e) {
      if (bits[k * hidden + e] != token_bits(part.ranks[0].index[0][k], e)) {
        state.SkipWithError(
            ("shard: local token " + std::to_string(k) + " holds the wrong token").c_str());
        return;
      }
    }
  }
}

void BM_gpu_gather(benchmark::State& state, const std::string& layout) {
  if (skip_without_device(state)) return;
  const std::int64_t len = state.range(0), hidden = state.range(1);
  const RowPartition part = partition_row(layout, kCp, len);
  const gpu::DeviceLayout device_layout(part.ranks[0], 0, nullptr);
  // The all-gather of every rank's shard, in rank order, built on the host from the partition.
  std::vector<std::uint16_t> host;
  host.reserve(static_cast<std::size_t>(part.padded_len * hidden));
  for (const ShardLayout& rank : part.ranks) {
    for (std::int64_t g : rank.index[0]) {
      for (std::int64_t e = 0; e < hidden; ++e) host.push_back(token_bits(g, e));
    }
  }
  const gpu::DeviceBuffer gathered = gpu::upload_vector(host, nullptr);
  gpu::DeviceBuffer owner(static_cast<std::size_t>(part.padded_len) * 8), out(host.size() * 2);
  gpu::owner_map(device_layout.device_map(), owner.as<std::int64_t>(), nullptr);
  gpu::TokenCopy c = row_copy(hidden);
  c.src = gathered.get();
  c.dst = out.get();
  c.src_tokens = part.padded_len;
  c.src_block = part.padded_len / kCp;
  c.dst_tokens = part.padded_len;
  c.source = owner.as<std::int64_t>();
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = time_on_device(nullptr, [&] { gpu::copy_tokens(c, nullptr); });
    state.SetIterationTime(s);
    seconds += s;
  }
  const auto bytes = static_cast<std::int64_t>(host.size() * 2);
  report_bandwidth(state, 2 * bytes, bytes / (2 * hidden), seconds, cuda_memcpy_gbps(bytes));
  const auto bits = gpu::download_vector<std::uint16_t>(out, host.size(), nullptr);
  for (std::int64_t g = 0; g < part.padded_len; ++g) {
    for (std::int64_t e = 0; e < hidden; ++e) {
      if (bits[g * hidden + e] != token_bits(g, e)) {
        state.SkipWithError(
            ("gather: global slot " + std::to_string(g) + " holds the wrong token").c_str());
        return;
      }
    }
  }
}

const bool registered = [] {
  // 256 MiB rows of 4 KiB tokens (hidden 2048 in 16 bits), and 8-byte tokens (ids) at 32 MiB.
  benchmark::RegisterBenchmark("BM_cuda_memcpy", BM_cuda_memcpy)
      ->Arg(std::int64_t{1} << 28)
      ->UseManualTime();
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    if (descriptor.cp_off) continue;  // one rank: nothing to shard or gather
    const std::string layout = descriptor.name;
    benchmark::RegisterBenchmark(("BM_gpu_shard/" + layout).c_str(), BM_gpu_shard, layout)
        ->Args({1 << 16, 2048})
        ->UseManualTime();
    benchmark::RegisterBenchmark(("BM_gpu_gather/" + layout).c_str(), BM_gpu_gather, layout)
        ->Args({1 << 16, 2048})
        ->UseManualTime();
  }
  // The ids row of the first causally balanced layout (bench_layouts.hpp: head-tail today).
  const std::string balanced = a_balanced_layout();
  benchmark::RegisterBenchmark(("BM_gpu_shard/" + balanced).c_str(), BM_gpu_shard, balanced)
      ->Args({1 << 22, 4})
      ->UseManualTime();
  return true;
}();

}  // namespace
}  // namespace cplab::bench
