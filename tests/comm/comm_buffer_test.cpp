// Every comm call checks its counts against the buffers it is handed before a byte moves: a send
// longer than its buffer, a receive into too little room, a null buffer. On ThreadComm the rank
// that passed them fails naming the call, the rank, the count and the buffer's size; the others
// are told at once instead of waiting for it; and the shared check runs before any comm's own
// step (a comm that records its steps sees none).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "comm/thread_comm.hpp"
#include "tests/comm/test_world.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using testsupport::error_of;
using testsupport::Ints;

using sim::RankContext;
using World = sim::testing::TestWorld;  // threads, or fibers (test_world.hpp)

void expect_contains(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n  in: " << message;
}

// Rank 1 of 3 makes the short call, the others the right one: the run fails at once, naming it.
std::string short_on_rank_one(const std::function<void(RankContext&, bool)>& call) {
  World world(3);  // the default timeout is a minute: the others must not wait for it
  return error_of([&] { world.run([&](RankContext& ctx) { call(ctx, ctx.rank == 1); }); });
}

TEST(CommBuffers, a_send_longer_than_its_buffer_names_the_call_rank_count_and_buffer) {
  expect_contains(
      short_on_rank_one([](RankContext& ctx, bool short_send) {
        Ints mine(short_send ? 2 : 3, 7), all(9);
        ctx.comm.all_gather(bytes_of(mine), bytes_of(all), 3, DType::i64);
      }),
      {"rank 1/3", "all_gather send (thread comm)", "3 x i64 (24 bytes)", "buffer of 16 bytes"});
  expect_contains(
      short_on_rank_one([](RankContext& ctx, bool short_recv) {
        Ints mine(3, 7), all(short_recv ? 8 : 9);
        ctx.comm.all_gather(bytes_of(mine), bytes_of(all), 3, DType::i64);
      }),
      {"rank 1/3", "all_gather recv", "3 blocks of 3 x i64 (72 bytes)", "buffer of 64 bytes"});
}

TEST(CommBuffers, every_collective_checks_each_of_its_buffers) {
  expect_contains(short_on_rank_one([](RankContext& ctx, bool bad) {
                    Ints buf(bad ? 1 : 2);
                    ctx.comm.all_reduce(bytes_of(buf), 2, DType::i64, ReduceOp::sum);
                  }),
                  {"rank 1/3", "all_reduce buffer", "2 x i64 (16 bytes)", "buffer of 8 bytes"});
  expect_contains(
      short_on_rank_one([](RankContext& ctx, bool bad) {
        Ints send(bad ? 5 : 6), mine(2);
        ctx.comm.reduce_scatter(bytes_of(send), bytes_of(mine), 2, DType::i64, ReduceOp::sum);
      }),
      {"rank 1/3", "reduce_scatter send", "3 blocks of 2 x i64 (48 bytes)", "buffer of 40 bytes"});
  expect_contains(short_on_rank_one([](RankContext& ctx, bool bad) {
                    Ints send(6), mine(bad ? 1 : 2);
                    ctx.comm.reduce_scatter(bytes_of(send), bytes_of(mine), 2, DType::i64,
                                            ReduceOp::sum);
                  }),
                  {"rank 1/3", "reduce_scatter recv", "buffer of 8 bytes"});
  expect_contains(short_on_rank_one([](RankContext& ctx, bool bad) {
                    Ints send(bad ? 2 : 3), recv(3);
                    ctx.comm.all_to_all(bytes_of(send), bytes_of(recv), 1, DType::i64);
                  }),
                  {"rank 1/3", "all_to_all send", "buffer of 16 bytes"});
  expect_contains(short_on_rank_one([](RankContext& ctx, bool bad) {
                    Ints send(3), recv(bad ? 2 : 3);
                    ctx.comm.all_to_all(bytes_of(send), bytes_of(recv), 1, DType::i64);
                  }),
                  {"rank 1/3", "all_to_all recv", "buffer of 16 bytes"});
  expect_contains(short_on_rank_one([](RankContext& ctx, bool bad) {
                    Ints mine(bad ? 1 : 2), all(64);
                    ctx.comm.all_gather_v(bytes_of(mine), 2, bytes_of(all), DType::i64);
                  }),
                  {"rank 1/3", "all_gather_v send", "buffer of 8 bytes"});
}

TEST(CommBuffers, point_to_point_calls_check_their_buffers) {
  // Rank 0 sends 4 elements from a buffer of 3 to rank 1; rank 2 waits in a barrier.
  World world(3);
  const std::string send_error = error_of([&] {
    world.run([&](RankContext& ctx) {
      Ints buf(3, 1), got(4);
      if (ctx.rank == 0) ctx.comm.send(bytes_of(buf), 4, DType::i64, 1, 5);
      if (ctx.rank == 1) ctx.comm.recv(bytes_of(got), 4, DType::i64, 0, 5);
      ctx.comm.barrier();
    });
  });
  expect_contains(send_error,
                  {"rank 0/3", "send (thread comm)", "4 x i64 (32 bytes)", "buffer of 24 bytes"});
  const std::string recv_error = error_of([&] {
    world.run([&](RankContext& ctx) {
      Ints buf(4, 1), got(3);
      if (ctx.rank == 0) ctx.comm.send(bytes_of(buf), 4, DType::i64, 1, 5);
      if (ctx.rank == 1) ctx.comm.recv(bytes_of(got), 4, DType::i64, 0, 5);
      ctx.comm.barrier();
    });
  });
  expect_contains(recv_error, {"rank 1/3", "recv (thread comm)", "buffer of 24 bytes"});
  const std::string exchange_error = error_of([&] {
    world.run([&](RankContext& ctx) {
      Ints send(ctx.rank == 2 ? 1 : 2, 1), recv(2);
      const int right = (ctx.rank + 1) % 3, left = (ctx.rank + 2) % 3;
      ctx.comm.send_recv(bytes_of(send), 2, right, bytes_of(recv), 2, left, DType::i64, 6);
    });
  });
  expect_contains(exchange_error, {"rank 2/3", "send_recv send", "buffer of 8 bytes"});
}

TEST(CommBuffers, a_null_buffer_and_a_size_past_size_t_are_refused) {
  World world(1);
  expect_contains(error_of([&] {
                    world.run([&](RankContext& ctx) {
                      ctx.comm.all_reduce({nullptr, 64}, 2, DType::i64, ReduceOp::sum);
                    });
                  }),
                  {"all_reduce buffer", "from a null buffer"});
  expect_contains(error_of([&] {
                    world.run([&](RankContext& ctx) {
                      Ints buf(2);
                      ctx.comm.send(bytes_of(buf), ~std::size_t{0} / 4, DType::i64, 0, 1);
                    });
                  }),
                  {"send (thread comm)", "past size_t", "buffer of 16 bytes"});
  // A count of zero needs no buffer at all.
  EXPECT_EQ(error_of([&] {
              world.run([&](RankContext& ctx) {
                ctx.comm.all_gather({nullptr, 0}, {nullptr, 0}, 0, DType::f32);
              });
            }),
            "");
}

// A comm whose steps only count their calls: the shared check refuses a short buffer before any
// comm's own step runs, so no implementation of Comm (ThreadComm, MpiComm, the device-sim comm,
// NCCL) is ever handed one.
class CountingComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string name() const override { return "counting"; }
  std::uint64_t bytes_sent() const override { return 0; }
  int steps = 0;

 private:
  void do_all_gather(const void*, void*, std::size_t, DType) override { ++steps; }
  std::vector<std::size_t> do_all_gather_v(const void*, std::size_t, void*, std::size_t,
                                           DType) override {
    ++steps;
    return {};
  }
  void do_all_reduce(void*, std::size_t, DType, ReduceOp) override { ++steps; }
  void do_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override { ++steps; }
  void do_all_to_all(const void*, void*, std::size_t, DType) override { ++steps; }
  void do_send(const void*, std::size_t, DType, int, int) override { ++steps; }
  void do_recv(void*, std::size_t, DType, int, int) override { ++steps; }
  void do_send_recv(const void*, std::size_t, int, void*, std::size_t, int, DType, int) override {
    ++steps;
  }
  void do_barrier() override { ++steps; }
};

TEST(CommBuffers, the_check_runs_before_any_comm_step) {
  CountingComm comm;
  Ints four(4), two(2);
  const std::vector<std::function<void()>> short_calls = {
      [&] { comm.all_gather(bytes_of(four), bytes_of(four), 3, DType::i64); },
      [&] { comm.all_gather_v(bytes_of(two), 3, bytes_of(four), DType::i64); },
      [&] { comm.all_reduce(bytes_of(two), 3, DType::i64, ReduceOp::sum); },
      [&] { comm.reduce_scatter(bytes_of(four), bytes_of(two), 3, DType::i64, ReduceOp::max); },
      [&] { comm.all_to_all(bytes_of(four), bytes_of(four), 3, DType::i64); },
      [&] { comm.send(bytes_of(two), 3, DType::i64, 1, 0); },
      [&] { comm.recv(bytes_of(two), 3, DType::i64, 1, 0); },
      [&] { comm.send_recv(bytes_of(two), 3, 1, bytes_of(four), 2, 1, DType::i64, 0); },
      [&] { comm.send_recv(bytes_of(two), 2, 1, bytes_of(two), 3, 1, DType::i64, 0); },
  };
  for (std::size_t i = 0; i < short_calls.size(); ++i) {
    const std::string message = error_of(short_calls[i]);
    EXPECT_NE(message.find("(counting comm on rank 0)"), std::string::npos) << i << ": " << message;
  }
  EXPECT_EQ(comm.steps, 0);
  // Buffers that fit reach the step.
  comm.all_gather(bytes_of(two), bytes_of(four), 2, DType::i64);
  comm.send_recv(bytes_of(two), 2, 1, bytes_of(four), 4, 1, DType::i64, 0);
  EXPECT_EQ(comm.steps, 2);
}

}  // namespace
}  // namespace cplab::commtest
