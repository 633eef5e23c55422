// What only ranks as fibers must get right (the World tests run again on fibers beside it): they
// really share one thread, each keeps its own rank tag and its own exception being handled across
// a wait, a delayed rank is woken at its deadline, and a World run inside a rank nests.
#include "comm/rank_fibers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/thread_comm.hpp"
#include "tests/comm/test_world.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using namespace std::chrono_literals;
using sim::RankContext;
using World = sim::testing::TestWorld;
using sim::WorldOptions;
using testsupport::error_of;
using testsupport::Ints;

TEST(RankFibers, SixtyFourRanksPassARingOnTheCallingThread) {
  ASSERT_TRUE(sim::fibers_supported());
  constexpr int kRanks = 64;
  World world(kRanks);
  std::set<std::thread::id> threads;
  std::vector<std::int64_t> got(kRanks, -1);
  world.run([&](RankContext& ctx) {
    threads.insert(std::this_thread::get_id());  // no lock: one thread runs every rank
    Ints token{ctx.rank}, received{-1};
    for (int step = 0; step < kRanks; ++step) {
      ctx.comm.send_recv(bytes_of(token), 1, (ctx.rank + 1) % kRanks, bytes_of(received), 1,
                         (ctx.rank + kRanks - 1) % kRanks, DType::i64, step);
      token = received;
    }
    got[static_cast<std::size_t>(ctx.rank)] = token[0];
  });
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  // After C steps every token is back where it started.
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], r);
}

// Every rank waits in a barrier while handling an exception of its own: the exception each one
// finds after the wait is its own (the thread's exception state follows the fiber).
TEST(RankFibers, EachRankKeepsTheExceptionItHandlesAcrossAWait) {
  World world(4);
  std::vector<std::string> seen(4);
  world.run([&](RankContext& ctx) {
    try {
      throw std::runtime_error("thrown by rank " + std::to_string(ctx.rank));
    } catch (const std::runtime_error&) {
      ctx.comm.barrier();
      try {
        throw;
      } catch (const std::runtime_error& again) {
        seen[static_cast<std::size_t>(ctx.rank)] = again.what();
      }
    }
    EXPECT_EQ(std::uncaught_exceptions(), 0);
  });
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(seen[static_cast<std::size_t>(r)], "thrown by rank " + std::to_string(r));
}

TEST(RankFibers, AnErrorAfterAWaitNamesItsOwnRank) {
  World world(3);
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      ctx.comm.barrier();
      if (ctx.rank == 2) CPLAB_FAIL("rank two's own failure");
    });
  });
  EXPECT_NE(message.find("rank 2/3"), std::string::npos) << message;
  EXPECT_NE(message.find("rank two's own failure"), std::string::npos) << message;
}

// A delayed contribution parks its fiber until the delay's deadline; the others wait for it.
TEST(RankFibers, ADelayedRankIsWokenAtItsDeadline) {
  sim::Fault late{.kind = sim::Fault::Kind::delay,
                  .rank = 1,
                  .call = "all_reduce",
                  .occurrence = 0,
                  .delay = 50ms,
                  .corrupt = {}};
  World world(3, WorldOptions{.timeout = 60s, .faults = {late}});
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::int64_t> sums(3, 0);
  world.run([&](RankContext& ctx) {
    Ints value{ctx.rank + 1};
    ctx.comm.all_reduce(bytes_of(value), 1, DType::i64, ReduceOp::sum);
    sums[static_cast<std::size_t>(ctx.rank)] = value[0];
  });
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  EXPECT_EQ(sums, (std::vector<std::int64_t>{6, 6, 6}));
  EXPECT_EQ(world.faults_fired(), 1);
}

TEST(RankFibers, AWorldRunInsideARankNests) {
  World outer(2);
  std::mutex mutex;
  std::vector<std::int64_t> sums;
  outer.run([&](RankContext& ctx) {
    World inner(3);
    inner.run([&](RankContext& in) {
      Ints value{in.rank + 10 * ctx.rank};
      in.comm.all_reduce(bytes_of(value), 1, DType::i64, ReduceOp::sum);
      if (in.rank == 0) {
        const std::lock_guard lock(mutex);
        sums.push_back(value[0]);
      }
    });
    ctx.comm.barrier();
  });
  std::sort(sums.begin(), sums.end());
  EXPECT_EQ(sums, (std::vector<std::int64_t>{3, 33}));
}

}  // namespace
}  // namespace cplab::commtest
