// Device suite, collectives: all-gather, reduce-scatter, all-to-all and the ring exchange on the
// device-sim comm (C virtual ranks on one GPU, collectives as device copies) and on NCCL (one
// rank per visible GPU). algbw and busbw as nccl-tests defines them (bench/collective_math.hpp,
// whose expectations the CPU tests check on ThreadComm); ratio_to_baseline = busbw / the bytes
// per second of one cudaMemcpy D2D. Collectives complete before they return, so rank 0 times
// kReps of them between two barriers on the host clock.
#include <chrono>
#include <vector>

#include "bench/collective_math.hpp"
#include "bench/gpu_bench.hpp"
#include "gpu/comm/device_sim_comm.hpp"
#include "gpu/comm/nccl_comm.hpp"

namespace cplab::bench {
namespace {

constexpr int kReps = 4;

void collective(gpu::DeviceComm& comm, Collective what, ConstBytes send, Bytes recv,
                std::size_t count, int tag) {
  const int cp = comm.size();
  switch (what) {
    case Collective::all_gather:
      return comm.all_gather(send, recv, count, DType::f32);
    case Collective::reduce_scatter:
      return comm.reduce_scatter(send, recv, count, DType::f32, ReduceOp::sum);
    case Collective::all_to_all:
      return comm.all_to_all(send, recv, count, DType::f32);
    case Collective::ring_exchange:
      return comm.send_recv(send, count, (comm.rank() + 1) % cp, recv, count,
                            (comm.rank() + cp - 1) % cp, DType::f32, tag);
  }
}

// One benchmark on a world whose run(fn) calls fn(comm) on every rank (DeviceSimWorld, NcclWorld).
template <typename World>
void run_collective(benchmark::State& state, World& world, Collective what, std::size_t count) {
  const int cp = world.size();
  const auto n = static_cast<std::size_t>(cp);
  std::vector<gpu::DeviceBuffer> send(n), recv(n);
  world.run([&](gpu::DeviceComm& comm) {  // each rank allocates on its own device
    const auto r = static_cast<std::size_t>(comm.rank());
    std::vector<float> host(send_elements(what, count, cp));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = collective_element(comm.rank(), i);
    send[r] = gpu::upload_vector(host, comm.stream());
    recv[r] = gpu::DeviceBuffer(recv_elements(what, count, cp) * 4);
    recv[r].fill_bytes(0, comm.stream());
  });
  double op_seconds = 0.0;
  for (auto _ : state) {
    double timed = 0.0;
    world.run([&](gpu::DeviceComm& comm) {
      const auto r = static_cast<std::size_t>(comm.rank());
      comm.barrier();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kReps; ++i)
        collective(comm, what, {send[r].get(), send[r].bytes()}, {recv[r].get(), recv[r].bytes()},
                   count, i);
      comm.barrier();
      if (comm.rank() == 0) timed = seconds_since(start) / kReps;
    });
    state.SetIterationTime(timed);
    op_seconds += timed;
  }
  report_collective(state, what, count, cp, op_seconds,
                    cuda_memcpy_gbps(static_cast<std::int64_t>(algbw_bytes(what, count, cp))));
  std::vector<std::vector<float>> got(n);
  world.run([&](gpu::DeviceComm& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    got[r] = gpu::download_vector<float>(recv[r], recv_elements(what, count, cp), comm.stream());
    send[r] = gpu::DeviceBuffer();  // freed on its own device
    recv[r] = gpu::DeviceBuffer();
  });
  const std::string wrong = check_collective(what, count, cp, [&](int r) { return got[r].data(); });
  if (!wrong.empty()) state.SkipWithError(wrong.c_str());
}

void BM_gpu_comm_device_sim(benchmark::State& state, Collective what) {
  if (skip_without_device(state)) return;
  gpu::DeviceSimWorld world(static_cast<int>(state.range(0)));
  run_collective(state, world, what, static_cast<std::size_t>(state.range(1)));
}

// One rank per visible GPU; a single GPU has no bus to measure.
void BM_gpu_comm_nccl(benchmark::State& state, Collective what) {
  if (skip_without_device(state)) return;
  const int devices = gpu::device_count();
  if (devices < 2) {
    state.SkipWithError("skipped: NCCL collectives need two or more visible GPUs");
    return;
  }
  std::vector<int> ids(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d) ids[static_cast<std::size_t>(d)] = d;
  gpu::NcclWorld world(ids);
  state.counters["C"] = devices;
  run_collective(state, world, what, static_cast<std::size_t>(state.range(0)));
}

const bool registered = [] {
  for (Collective what : {Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all, Collective::ring_exchange}) {
    const std::string name = collective_name(what);
    // 16 MiB per rank block at C = 2, 4 MiB at C = 8.
    benchmark::RegisterBenchmark(("BM_gpu_comm_device_sim/" + name).c_str(), BM_gpu_comm_device_sim,
                                 what)
        ->ArgNames({"C", "count"})
        ->Args({2, 1 << 22})
        ->Args({8, 1 << 20})
        ->UseManualTime();
    benchmark::RegisterBenchmark(("BM_gpu_comm_nccl/" + name).c_str(), BM_gpu_comm_nccl, what)
        ->ArgNames({"count"})
        ->Args({1 << 22})
        ->UseManualTime();
  }
  return true;
}();

}  // namespace
}  // namespace cplab::bench
