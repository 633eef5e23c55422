// Host token moves through the twin's own verbs (SimImplementation::shard_token_tensor and
// gather_token_tensor) on one long [1, S, H] row per registered layout, in bf16 and f32, against
// memcpy of the same bytes in this process. Shard moves ℓ tokens once; gather receives the C·ℓ
// all-gathered tokens (one copy, replayed from a real ThreadComm run) and puts each at its global
// slot (a second copy): both counted as read + write. Timed in thread CPU seconds, like the
// interleaved memcpy baseline (bench_support.hpp).
#include <cstring>
#include <optional>

#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "bench/replay_comm.hpp"
#include "comm/thread_comm.hpp"
#include "core/token_moves.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::bench {
namespace {

constexpr std::int64_t kLen = 1 << 15, kHidden = 512, kCp = 8;

// The global row, every element naming its token and offset.
Tensor located_row(std::int64_t len, DType dtype) {
  Tensor t(dtype, {1, len, kHidden});
  for (std::int64_t g = 0; g < len; ++g) {
    for (std::int64_t e = 0; e < kHidden; ++e) {
      if (dtype == DType::bf16) {
        reinterpret_cast<std::uint16_t*>(t.raw())[g * kHidden + e] = token_bits(g, e);
      } else {
        reinterpret_cast<float*>(t.raw())[g * kHidden + e] = token_value(g, e);
      }
    }
  }
  return t;
}

void BM_host_memcpy(benchmark::State& state) {
  const std::int64_t bytes = kLen * kHidden * 2 / kCp;
  std::vector<std::byte> a(static_cast<std::size_t>(bytes), std::byte{1}),
      b(static_cast<std::size_t>(bytes));
  InterleavedMemcpy baseline(bytes);
  std::vector<double> seconds;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
    seconds.push_back(thread_cpu_seconds() - start);
    baseline.run();
  }
  report_bandwidth(state, 2 * bytes, bytes, seconds, baseline.gbps());
  if (std::memcmp(a.data(), b.data(), a.size()) != 0)
    state.SkipWithError("memcpy copied wrong bytes");
}

// A padded-length tensor is sharded by the index map (a caller-length packed row would take the
// caller positions instead): local token k must be global token index[k].
// The ceiling of a stripe shard without the verb: a plain strided copy of one token of kTokenBytes
// out of every kCp (1 KiB of every 8 KiB, as stripe's rank 0 reads a bf16 row of H=512), against
// a memcpy of the same bytes. Only part of each 64-byte line the prefetcher brings is a token the
// rank keeps when tokens are small; at 1 KiB whole lines are used, so what is left is the cost of
// jumping between pages: this ratio is what BM_host_shard/stripe can reach on this machine.
void BM_host_strided_copy(benchmark::State& state) {
  constexpr std::int64_t kTokenBytes = 1024;
  const std::int64_t tokens = kLen / kCp;
  std::vector<std::byte> from(static_cast<std::size_t>(kLen * kTokenBytes));
  for (std::size_t i = 0; i < from.size(); ++i) from[i] = static_cast<std::byte>(i * 131 % 251);
  std::vector<std::byte> to(static_cast<std::size_t>(tokens * kTokenBytes));
  const std::int64_t bytes = tokens * kTokenBytes;
  InterleavedMemcpy baseline(bytes);
  std::vector<double> seconds;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    for (std::int64_t t = 0; t < tokens; ++t)
      std::memcpy(to.data() + t * kTokenBytes, from.data() + t * kCp * kTokenBytes, kTokenBytes);
    benchmark::DoNotOptimize(to.data());
    seconds.push_back(thread_cpu_seconds() - start);
    baseline.run();
  }
  report_bandwidth(state, 2 * bytes, tokens, seconds, baseline.gbps());
  for (std::int64_t t = 0; t < tokens; ++t) {
    if (std::memcmp(to.data() + t * kTokenBytes, from.data() + t * kCp * kTokenBytes,
                    kTokenBytes) != 0) {
      state.SkipWithError("strided copy: a token is not the one every kCp-th slot holds");
      return;
    }
  }
}

void BM_host_shard(benchmark::State& state, const std::string& layout, DType dtype) {
  const RowPartition part = partition_row(layout, kCp, kLen);
  const ShardLayout& mine = part.ranks[0];
  const Tensor global = located_row(part.padded_len, dtype);
  sim::SimImplementation impl;
  ReplayComm comm(0, static_cast<int>(part.cp), {});
  const std::int64_t local = mine.local_len();
  InterleavedMemcpy baseline(local * kHidden * static_cast<std::int64_t>(dtype_size(dtype)));
  const bool caller_rows = mine.packed && part.padded_len == mine.caller_len;
  Tensor out;
  std::vector<double> seconds;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    out = impl.shard_token_tensor(comm, mine, global, 1, std::nullopt);
    benchmark::DoNotOptimize(out.raw());
    seconds.push_back(thread_cpu_seconds() - start);
    baseline.run();
  }
  const std::int64_t bytes = local * kHidden * static_cast<std::int64_t>(dtype_size(dtype));
  report_bandwidth(state, 2 * bytes, local, seconds, baseline.gbps());
  const std::vector<std::int64_t>& from = caller_rows ? mine.caller_pos[0] : mine.index[0];
  const Tensor want = take_tokens(global, 1, {from}, local);
  if (!(out == want)) state.SkipWithError("shard: a local token is not the one its map names");
}

void BM_host_gather(benchmark::State& state, const std::string& layout, DType dtype) {
  const RowPartition part = partition_row(layout, kCp, kLen);
  const Tensor global = located_row(part.padded_len, dtype);
  std::vector<Tensor> locals;
  for (const ShardLayout& r : part.ranks)
    locals.push_back(take_tokens(global, 1, r.index, r.local_len()));
  // Record what rank 0 receives in a real run of every rank.
  sim::SimImplementation impl;
  std::vector<Delivery> received;
  sim::World world(static_cast<int>(part.cp));
  world.run([&](sim::RankContext& ctx) {
    RecordingComm recording(ctx.comm);
    impl.gather_token_tensor(recording, part.ranks[static_cast<std::size_t>(ctx.rank)],
                             locals[static_cast<std::size_t>(ctx.rank)], 1, false);
    if (ctx.rank == 0) received = recording.deliveries();
  });
  ReplayComm comm(0, static_cast<int>(part.cp), received);
  const std::int64_t bytes =
      part.padded_len * kHidden * static_cast<std::int64_t>(dtype_size(dtype));
  InterleavedMemcpy baseline(bytes);
  Tensor out;
  std::vector<double> seconds;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    out = impl.gather_token_tensor(comm, part.ranks[0], locals[0], 1, false);
    benchmark::DoNotOptimize(out.raw());
    seconds.push_back(thread_cpu_seconds() - start);
    baseline.run();
  }
  report_bandwidth(state, 4 * bytes, part.padded_len, seconds, baseline.gbps());
  if (!(out == global))
    state.SkipWithError("gather did not put every token back at its global slot");
}

}  // namespace

void register_token_move_benchmarks() {
  benchmark::RegisterBenchmark("BM_host_memcpy", BM_host_memcpy)->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark("BM_host_strided_copy", BM_host_strided_copy)
      ->MeasureProcessCPUTime();
  for (const std::string& layout : layout_names()) {
    for (const DType dtype : {DType::bf16, DType::f32}) {
      const std::string suffix = layout + "/" + std::string(dtype_name(dtype));
      benchmark::RegisterBenchmark(("BM_host_shard/" + suffix).c_str(), BM_host_shard, layout,
                                   dtype)
          ->MeasureProcessCPUTime();
      benchmark::RegisterBenchmark(("BM_host_gather/" + suffix).c_str(), BM_host_gather, layout,
                                   dtype)
          ->MeasureProcessCPUTime();
    }
  }
}

}  // namespace cplab::bench
