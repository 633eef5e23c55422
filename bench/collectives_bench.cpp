// ThreadComm collectives on a World of C ranks (threads): all-gather, reduce-scatter, all-to-all
// and the neighbour exchange (send_recv around a ring). algbw = S / t and busbw = algbw · factor
// as nccl-tests defines them (S: all-gather the gathered bytes, reduce-scatter and all-to-all
// the bytes each rank sends, the ring exchange the bytes each rank sends; factor (n-1)/n, 1 for
// the ring). ratio_to_baseline = busbw / the bytes per second of one memcpy in this process.
// Reading it: every rank copies its whole output once, straight from the senders' buffers (parts
// of 64 KiB and more are lent, not staged), its own block included; so with C ranks on K cores
// the ceiling is about min(K, C) / C × (n - 1) / n for the all-gather and all-to-all (0.5 for
// C = 2, 0.22 for C = 8 on 2 cores), lower for the reduce-scatter, which also adds.
#include <cstring>

#include "bench/bench_support.hpp"
#include "bench/collective_math.hpp"
#include "bench/cpu_suites.hpp"
#include "comm/thread_comm.hpp"

namespace cplab::bench {
namespace {

constexpr int kReps = 4;  // collectives per timed World run

void BM_comm(benchmark::State& state, Collective what) {
  const int cp = static_cast<int>(state.range(0));
  const auto count = static_cast<std::size_t>(state.range(1));  // f32 elements per rank block
  const auto n = static_cast<std::size_t>(cp);
  sim::World world(cp);
  std::vector<std::vector<float>> send(n), recv(n);
  for (int r = 0; r < cp; ++r) {
    const std::size_t in = send_elements(what, count, cp);
    send[r].resize(in);
    for (std::size_t i = 0; i < in; ++i) send[r][i] = collective_element(r, i);
    recv[r].assign(recv_elements(what, count, cp), 0.0f);
  }
  double op_seconds = 0.0;
  for (auto _ : state) {
    double timed = 0.0;
    world.run([&](sim::RankContext& ctx) {
      const auto r = static_cast<std::size_t>(ctx.rank);
      ctx.comm.barrier();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kReps; ++i) {
        switch (what) {
          case Collective::all_gather:
            ctx.comm.all_gather(bytes_of(send[r]), bytes_of(recv[r]), count, DType::f32);
            break;
          case Collective::reduce_scatter:
            ctx.comm.reduce_scatter(bytes_of(send[r]), bytes_of(recv[r]), count, DType::f32,
                                    ReduceOp::sum);
            break;
          case Collective::all_to_all:
            ctx.comm.all_to_all(bytes_of(send[r]), bytes_of(recv[r]), count, DType::f32);
            break;
          case Collective::ring_exchange:
            ctx.comm.send_recv(bytes_of(send[r]), count, (ctx.rank + 1) % cp, bytes_of(recv[r]),
                               count, (ctx.rank + cp - 1) % cp, DType::f32, 7 + i);
            break;
        }
      }
      ctx.comm.barrier();
      if (ctx.rank == 0) timed = seconds_since(start) / kReps;
    });
    state.SetIterationTime(timed);
    op_seconds += timed;
  }
  report_collective(state, what, count, cp, op_seconds,
                    memcpy_gbps(static_cast<std::int64_t>(algbw_bytes(what, count, cp))));
  // The output of the last collective, checked on every rank.
  const std::string wrong =
      check_collective(what, count, cp, [&](int r) { return recv[r].data(); });
  if (!wrong.empty()) state.SkipWithError(wrong.c_str());
}

}  // namespace

void register_collective_benchmarks() {
  const std::pair<const char*, Collective> all[] = {
      {"BM_comm_all_gather", Collective::all_gather},
      {"BM_comm_reduce_scatter", Collective::reduce_scatter},
      {"BM_comm_all_to_all", Collective::all_to_all},
      {"BM_comm_ring_exchange", Collective::ring_exchange},
  };
  for (const auto& [name, what] : all) {
    benchmark::RegisterBenchmark(name, BM_comm, what)
        ->ArgNames({"C", "count"})
        ->Args({2, 1 << 20})
        ->Args({8, 1 << 17})
        ->UseManualTime();
  }
}

}  // namespace cplab::bench
