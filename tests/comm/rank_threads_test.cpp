// World::run keeps its rank threads for later runs (comm/rank_threads.hpp): a second run finds the
// first one's threads; what a rank hands to at_rank_end runs when the rank ends, before run()
// returns, in reverse order, whether the rank returned or threw; a rank that starts a World of
// its own gets threads of its own.
#include "comm/rank_threads.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include "comm/thread_comm.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using testsupport::error_of;

using sim::RankContext;
using sim::World;

TEST(RankThreads, ALaterRunReusesTheThreadsOfAnEarlierOne) {
  World world(4);
  std::mutex mutex;
  std::set<std::thread::id> first, second;
  // The barrier keeps every rank of a run alive until all have started: none returns its thread
  // before the last one is given out.
  world.run([&](RankContext& ctx) {
    {
      std::lock_guard lock(mutex);
      first.insert(std::this_thread::get_id());
    }
    ctx.comm.barrier();
  });
  world.run([&](RankContext& ctx) {
    {
      std::lock_guard lock(mutex);
      second.insert(std::this_thread::get_id());
    }
    ctx.comm.barrier();
  });
  EXPECT_EQ(first.size(), 4u);  // ranks that run at the same time run on threads of their own
  EXPECT_EQ(second, first);     // the threads the first run gave back are the latest idle ones
}

TEST(RankThreads, RankEndHooksRunWhenTheRankEndsInReverseOrder) {
  World world(3);
  std::mutex mutex;
  std::vector<std::string> ended;
  const auto note = [&](std::string what) {
    std::lock_guard lock(mutex);
    ended.push_back(std::move(what));
  };
  const std::string message = error_of([&] {
    world.run([&](RankContext& ctx) {
      sim::at_rank_end([&, r = ctx.rank] { note("first " + std::to_string(r)); });
      sim::at_rank_end([&, r = ctx.rank] { note("second " + std::to_string(r)); });
      CPLAB_CHECK(ctx.rank != 1, "rank 1 throws");
    });
  });
  EXPECT_NE(message.find("rank 1 throws"), std::string::npos) << message;
  ASSERT_EQ(ended.size(), 6u);  // all of them before run() returned, the failing rank's too
  for (int r = 0; r < 3; ++r) {
    const auto at = [&](const std::string& what) {
      return std::find(ended.begin(), ended.end(), what + " " + std::to_string(r)) - ended.begin();
    };
    EXPECT_LT(at("second"), at("first")) << "rank " << r;
  }
  // A later run starts with none of them.
  ended.clear();
  world.run([](RankContext&) {});
  EXPECT_TRUE(ended.empty());
}

// A thread that serves no rank (a test's, an MPI process's main thread) keeps its thread-local
// state until it ends: a hook run from its thread-local destructors could find that state gone.
TEST(RankThreads, RankEndHooksOutsideARankAreNotKept) {
  int ran = 0;
  std::thread([&] { sim::at_rank_end([&] { ++ran; }); }).join();
  EXPECT_EQ(ran, 0);
}

TEST(RankThreads, ARankMayRunAWorldOfItsOwn) {
  World outer(2);
  std::vector<std::int64_t> sums(2, 0);
  outer.run([&](RankContext& ctx) {
    World inner(3);
    inner.run([&](RankContext& inner_ctx) {
      std::int64_t x = inner_ctx.rank + 1;
      inner_ctx.comm.all_reduce({&x, sizeof x}, 1, DType::i64, ReduceOp::sum);
      if (inner_ctx.rank == 0) sums[ctx.rank] = x;
    });
  });
  EXPECT_EQ(sums, (std::vector<std::int64_t>{6, 6}));
}

}  // namespace
}  // namespace cplab::commtest
