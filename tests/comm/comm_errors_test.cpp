// ThreadComm never hangs: a collective a rank does not join, joins with another size or another
// collective, or a rank that throws, ends in an error naming who is waiting and who is missing.
// Fault injection alters exactly the contribution it targets.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <latch>
#include <stdexcept>
#include <vector>

#include "comm/thread_comm.hpp"
#include "tests/comm/test_world.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using testsupport::error_of;
using testsupport::Ints;

using namespace std::chrono_literals;
using sim::Fault;
using sim::RankContext;
using World = sim::testing::TestWorld;  // threads, or fibers (test_world.hpp)
using sim::WorldOptions;
using Clock = std::chrono::steady_clock;

void expect_contains(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n  in: " << message;
}

void gather_three(RankContext& ctx, std::size_t count = 3) {
  Ints mine(count, ctx.rank), all(count * static_cast<std::size_t>(ctx.size));
  ctx.comm.all_gather(bytes_of(mine), bytes_of(all), count, DType::i64);
}

// Threads only: the rank that never comes blocks outside the comm (a latch), which as a fiber
// would hold the one thread every rank shares.
#ifndef CPLAB_TEST_RANKS_AS_FIBERS
TEST(CommErrors, timeout_names_collective_waiting_ranks_and_missing_rank) {
  World world(3, WorldOptions{.timeout = 1000ms, .faults = {}});
  std::latch others_done(2), both_started(2);
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      if (ctx.rank == 2) {  // busy with something else; it never joins
        others_done.wait();
        return;
      }
      try {
        both_started.arrive_and_wait();
        gather_three(ctx);
      } catch (const Error&) {
        others_done.count_down();
        throw;
      }
    });
  });
  // Both waiters are named unless a loaded machine kept one away for the whole second.
  expect_contains(
      message, {"all_gather #0 timed out after 1000 ms", "waiting ranks: 0", "rank 2 (running)"});
}
#endif

TEST(CommErrors, rank_that_returned_is_named_at_once) {
  World world(3);  // the default timeout is a minute: the error must not wait for it
  const auto start = Clock::now();
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      if (ctx.rank == 2) return;
      std::int64_t x = 1;
      ctx.comm.all_reduce({&x, sizeof x}, 1, DType::i64, ReduceOp::sum);
    });
  });
  expect_contains(message, {"all_reduce #0", "rank 2 returned without joining it"});
  EXPECT_LT(Clock::now() - start, 20s);
}

TEST(CommErrors, disagreeing_sizes_are_named) {
  World world(3);
  const std::string message = error_of(
      [&] { world.run([&](RankContext& ctx) { gather_three(ctx, ctx.rank == 1 ? 2 : 3); }); });
  expect_contains(message, {"all_gather #0: sizes disagree", "rank 0: 3 x i64", "rank 1: 2 x i64",
                            "rank 2: 3 x i64"});
}

TEST(CommErrors, different_collectives_are_a_mismatch) {
  World world(2);
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      if (ctx.rank == 1) return ctx.comm.barrier();
      gather_three(ctx);
    });
  });
  expect_contains(message, {"collective #0 mismatch", "barrier", "all_gather"});
}

TEST(CommErrors, one_rank_throwing_releases_the_others_promptly) {
  World world(4);
  const auto start = Clock::now();
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      if (ctx.rank == 1) throw std::runtime_error("boom");
      gather_three(ctx);
    });
  });
  expect_contains(message, {"rank 1/4: boom"});
  EXPECT_LT(Clock::now() - start, 20s);
}

TEST(CommErrors, rank_errors_carry_their_rank_tag) {
  World world(3);
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      CPLAB_CHECK(ctx.rank != 2, "rank-local check failed with value {}", 42);
    });
  });
  expect_contains(message, {"rank 2/3: rank-local check failed with value 42"});
}

TEST(CommErrors, recv_size_mismatch_and_missing_sender) {
  World world(2);
  expect_contains(error_of([&] {
                    world.run([&](RankContext& ctx) {
                      Ints buf(3, 0);
                      if (ctx.rank == 0) return ctx.comm.send(bytes_of(buf), 3, DType::i64, 1, 4);
                      ctx.comm.recv(bytes_of(buf), 2, DType::i64, 0, 4);
                    });
                  }),
                  {"recv from rank 0 (tag 4): expected 2 x i64, rank 0 sent 3 x i64"});
  expect_contains(error_of([&] {
                    world.run([&](RankContext& ctx) {
                      std::int64_t x = 0;
                      if (ctx.rank == 1) ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 0, 9);
                    });
                  }),
                  {"recv from rank 0 (tag 9): rank 0 returned without sending it"});
}

// Threads only: the rank that never comes blocks outside the comm (a latch), which as a fiber
// would hold the one thread every rank shares.
#ifndef CPLAB_TEST_RANKS_AS_FIBERS
TEST(CommErrors, recv_timeout_names_the_missing_peer) {
  World world(2, WorldOptions{.timeout = 100ms, .faults = {}});
  std::latch receiver_done(1);
  expect_contains(error_of([&] {
                    world.run([&](RankContext& ctx) {
                      std::int64_t x = 0;
                      if (ctx.rank == 0) return receiver_done.wait();
                      try {
                        ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 0, 3);
                      } catch (const Error&) {
                        receiver_done.count_down();
                        throw;
                      }
                    });
                  }),
                  {"recv from rank 0 (tag 3) timed out after 100 ms", "waiting ranks: 1",
                   "missing: rank 0 (running)"});
}
#endif

TEST(CommErrors, skipped_send_is_a_deadlock_named_at_once_with_the_wait_for_picture) {
  // The timeout is a minute: the error must come from the deadlock check, far before it.
  World world(4, WorldOptions{.timeout = 60s, .faults = {}});
  const auto start = Clock::now();
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      std::int64_t x = ctx.rank;
      // Rank 1 owes rank 2 a message (tag 7) but skips the send and goes on to the gather.
      if (ctx.rank == 2) ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 1, 7);
      gather_three(ctx);
    });
  });
  EXPECT_LT(Clock::now() - start, 20s);
  expect_contains(message, {"deadlock", "rank 2 waits in recv from rank 1 tag 7",
                            "ranks 0, 1 and 3 wait in all_gather #0"});
  EXPECT_EQ(message.find("timed out"), std::string::npos) << message;
}

TEST(CommErrors, a_rank_left_behind_by_a_finished_one_is_told_who_finished) {
  World world(3, WorldOptions{.timeout = 60s, .faults = {}});
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      std::int64_t x = 0;
      if (ctx.rank == 2) ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 1, 7);
      if (ctx.rank == 0) ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 2, 7);
    });
  });
  // The picture is a snapshot: rank 0 may or may not be waiting yet when rank 2 finds out.
  expect_contains(message, {"recv from rank 1 (tag 7): rank 1 returned without sending it",
                            "wait-for:", "rank 1 has finished"});
}

TEST(CommFaults, corrupt_alters_only_the_targeted_call_and_rank) {
  Fault fault{.kind = Fault::Kind::corrupt,
              .rank = 1,
              .call = "all_gather",
              .occurrence = 1,
              .delay = {},
              .corrupt = {}};
  World world(3, WorldOptions{.timeout = 60s, .faults = {fault}});
  std::vector<Ints> first(3), second(3);
  world.run([&](RankContext& ctx) {
    Ints mine = {10 * ctx.rank}, all(3);
    ctx.comm.all_gather(bytes_of(mine), bytes_of(all), 1, DType::i64);
    first[ctx.rank] = all;
    ctx.comm.all_gather(bytes_of(mine), bytes_of(all), 1, DType::i64);
    second[ctx.rank] = all;
  });
  EXPECT_EQ(world.faults_fired(), 1);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(first[r], (Ints{0, 10, 20}));
    EXPECT_EQ(second[r], (Ints{0, 11, 20}));
  }
}

TEST(CommFaults, reorder_reverses_a_message) {
  Fault fault{.kind = Fault::Kind::reorder,
              .rank = 0,
              .call = "send",
              .occurrence = -1,
              .delay = {},
              .corrupt = {}};
  World world(2, WorldOptions{.timeout = 60s, .faults = {fault}});
  Ints got(3);
  world.run([&](RankContext& ctx) {
    Ints buf = {1, 2, 3};
    if (ctx.rank == 0) return ctx.comm.send(bytes_of(buf), 3, DType::i64, 1, 0);
    ctx.comm.recv(bytes_of(got), 3, DType::i64, 0, 0);
  });
  EXPECT_EQ(got, (Ints{3, 2, 1}));
  EXPECT_EQ(world.faults_fired(), 1);
}

TEST(CommFaults, short_delay_is_waited_for_long_delay_times_out_naming_the_rank) {
  Fault fault{.kind = Fault::Kind::delay,
              .rank = 2,
              .call = "all_gather",
              .occurrence = 0,
              .delay = 50ms,
              .corrupt = {}};
  World patient(3, WorldOptions{.timeout = 60s, .faults = {fault}});
  patient.run([&](RankContext& ctx) { gather_three(ctx); });
  EXPECT_EQ(patient.faults_fired(), 1);

  fault.delay = 5s;  // far beyond the timeout; the failure of the others cuts it short
  World impatient(3, WorldOptions{.timeout = 100ms, .faults = {fault}});
  const auto start = Clock::now();
  expect_contains(error_of([&] { impatient.run([&](RankContext& ctx) { gather_three(ctx); }); }),
                  {"all_gather #0 timed out after 100 ms", "rank 2 (delayed 5000 ms by a fault"});
  EXPECT_LT(Clock::now() - start, 4s);
}

TEST(CommFaults, dropped_contribution_is_reported_with_the_rank) {
  Fault fault{.kind = Fault::Kind::drop,
              .rank = 2,
              .call = "all_gather",
              .occurrence = 0,
              .delay = {},
              .corrupt = {}};
  World world(3, WorldOptions{.timeout = 60s, .faults = {fault}});
  const auto start = Clock::now();
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      gather_three(ctx);
      ctx.comm.barrier();
    });
  });
  expect_contains(message, {"all_gather #0: rank 2 "});
  EXPECT_LT(Clock::now() - start, 20s);
}

TEST(CommFaults, dropped_message_is_reported_with_the_sender) {
  Fault fault{.kind = Fault::Kind::drop,
              .rank = 0,
              .call = "send",
              .occurrence = 0,
              .delay = {},
              .corrupt = {}};
  World world(2, WorldOptions{.timeout = 60s, .faults = {fault}});
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      std::int64_t x = 5;
      if (ctx.rank == 0) return ctx.comm.send({&x, sizeof x}, 1, DType::i64, 1, 2);
      ctx.comm.recv({&x, sizeof x}, 1, DType::i64, 0, 2);
    });
  });
  expect_contains(message, {"recv from rank 0 (tag 2): rank 0 returned without sending it"});
}

}  // namespace
}  // namespace cplab::commtest
