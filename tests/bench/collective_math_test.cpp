// The expectations every collective benchmark checks its output with (bench/collective_math.hpp,
// shared by the ThreadComm, device-sim and NCCL suites) hold on ThreadComm's real collectives,
// catch a corrupted contribution, and give nccl-tests' algbw sizes and busbw factors.
#include "bench/collective_math.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "comm/thread_comm.hpp"

namespace cplab::bench {
namespace {

const Collective kAll[] = {Collective::all_gather, Collective::reduce_scatter,
                           Collective::all_to_all, Collective::ring_exchange};

// Every rank's receive buffer after one collective on a World of cp ranks.
std::vector<std::vector<float>> run_once(Collective what, int cp, std::size_t count,
                                         sim::WorldOptions options = {}) {
  sim::World world(cp, std::move(options));
  std::vector<std::vector<float>> recv(static_cast<std::size_t>(cp));
  world.run([&](sim::RankContext& ctx) {
    std::vector<float> send(send_elements(what, count, cp));
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = collective_element(ctx.rank, i);
    std::vector<float>& out = recv[static_cast<std::size_t>(ctx.rank)];
    out.assign(recv_elements(what, count, cp), 0.0f);
    switch (what) {
      case Collective::all_gather:
        return ctx.comm.all_gather(bytes_of(send), bytes_of(out), count, DType::f32);
      case Collective::reduce_scatter:
        return ctx.comm.reduce_scatter(bytes_of(send), bytes_of(out), count, DType::f32,
                                       ReduceOp::sum);
      case Collective::all_to_all:
        return ctx.comm.all_to_all(bytes_of(send), bytes_of(out), count, DType::f32);
      case Collective::ring_exchange:
        return ctx.comm.send_recv(bytes_of(send), count, (ctx.rank + 1) % cp, bytes_of(out), count,
                                  (ctx.rank + cp - 1) % cp, DType::f32, 3);
    }
  });
  return recv;
}

TEST(CollectiveMath, expectations_hold_on_thread_comm) {
  for (Collective what : kAll) {
    for (int cp : {1, 2, 3, 8}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{5}, std::size_t{4099}}) {
        const auto recv = run_once(what, cp, count);
        EXPECT_EQ(check_collective(what, count, cp, [&](int r) { return recv[r].data(); }), "")
            << collective_name(what) << " C=" << cp << " count " << count;
      }
    }
  }
}

TEST(CollectiveMath, a_corrupted_contribution_is_found) {
  const std::pair<Collective, const char*> calls[] = {
      {Collective::all_gather, "all_gather"},
      {Collective::reduce_scatter, "reduce_scatter"},
      {Collective::all_to_all, "all_to_all"},
      {Collective::ring_exchange, "send"}};
  for (const auto& [what, call] : calls) {
    sim::WorldOptions options;
    sim::Fault fault;
    fault.kind = sim::Fault::Kind::corrupt;
    fault.rank = 1;
    fault.call = call;
    options.faults.push_back(fault);
    const auto recv = run_once(what, 3, 7, options);
    EXPECT_NE(check_collective(what, 7, 3, [&](int r) { return recv[r].data(); }), "")
        << collective_name(what);
  }
}

TEST(CollectiveMath, sizes_and_bus_factors_are_nccl_tests_ones) {
  // 1024 f32 per rank block on 8 ranks: S is the whole gathered / sent buffer, 32 KiB.
  EXPECT_EQ(algbw_bytes(Collective::all_gather, 1024, 8), 32768.0);
  EXPECT_EQ(algbw_bytes(Collective::reduce_scatter, 1024, 8), 32768.0);
  EXPECT_EQ(algbw_bytes(Collective::all_to_all, 1024, 8), 32768.0);
  EXPECT_EQ(algbw_bytes(Collective::ring_exchange, 1024, 8), 4096.0);
  EXPECT_EQ(bus_factor(Collective::all_gather, 8), 7.0 / 8.0);
  EXPECT_EQ(bus_factor(Collective::reduce_scatter, 4), 3.0 / 4.0);
  EXPECT_EQ(bus_factor(Collective::all_to_all, 2), 0.5);
  EXPECT_EQ(bus_factor(Collective::ring_exchange, 8), 1.0);
  EXPECT_EQ(bus_factor(Collective::all_gather, 1), 0.0);
}

}  // namespace
}  // namespace cplab::bench
