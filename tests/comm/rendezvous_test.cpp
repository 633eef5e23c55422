// The rendezvous engine under ThreadComm and the device-sim comm, driven by plain threads: rounds
// and mailboxes deliver, and every way a group can go wrong ends in an error that names it — a
// missing rank (at the deadline while it computes, at once when it has left), parts of the wrong
// size, a rank that fails, and a deadlock (at once, with the wait-for picture, long before the
// timeout). A rank that is computing is never taken for a deadlocked one.
#include "comm/rendezvous.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <thread>

#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using testsupport::error_of;

using namespace std::chrono_literals;
using sim::RankActivity;
using Clock = std::chrono::steady_clock;
using Engine = sim::Rendezvous<std::vector<int>>;
using Kind = RankActivity::Kind;

// Runs body(rank) on `size` threads, each leaving the engine as ThreadComm's World does; returns
// the first failure's message ("" when every rank returned).
std::string run_ranks(Engine& engine, const std::function<void(int)>& body) {
  std::vector<std::jthread> threads;
  for (int r = 0; r < engine.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
        engine.returned(r);
      } catch (const std::exception& e) {
        engine.failed(r, std::current_exception(), e.what());
      }
    });
  }
  threads.clear();  // joins
  return error_of([&] {
    if (auto failure = engine.first_failure()) std::rethrow_exception(failure);
  });
}

void expect_contains(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n  in: " << message;
}

// Every part of a round must have the size of rank 0's: the check a comm runs in consume.
void sum_round(Engine& engine, int rank, std::size_t count, std::vector<int>* out = nullptr) {
  engine.join(rank, "all_reduce", std::vector<int>(count, rank + 1),
              [&](std::int64_t seq, const std::vector<std::vector<int>>& parts) {
                std::vector<int> sum(parts[0].size(), 0);
                for (std::size_t r = 0; r < parts.size(); ++r) {
                  CPLAB_CHECK(parts[r].size() == parts[0].size(),
                              "all_reduce #{}: rank {} sends {} elements, rank 0 sends {}", seq, r,
                              parts[r].size(), parts[0].size());
                  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += parts[r][i];
                }
                if (out) *out = sum;
              });
}

TEST(WaitForPicture, GroupsRanksInTheSameStateInOrderOfTheirLowestRank) {
  const auto collective =
      RankActivity{.kind = Kind::collective, .call = "all_gather", .seq = 4, .peer = -1, .tag = 0};
  const std::vector<RankActivity> ranks = {
      collective,
      {.kind = Kind::finished, .call = {}, .seq = -1, .peer = -1, .tag = 0},
      {.kind = Kind::recv, .call = {}, .seq = -1, .peer = 1, .tag = 7},
      collective,
      {.kind = Kind::computing, .call = {}, .seq = -1, .peer = -1, .tag = 0},
      collective,
  };
  EXPECT_EQ(sim::wait_for_picture(ranks),
            "ranks 0, 3 and 5 wait in all_gather #4; rank 1 has finished; rank 2 waits in recv "
            "from rank 1 tag 7; rank 4 is computing");
  EXPECT_EQ(sim::doing(ranks[2]), "in recv from rank 1 (tag 7)");
  EXPECT_EQ(sim::doing(ranks[4]), "running");
}

TEST(Rendezvous, RoundsAndMailboxesDeliverInOrder) {
  Engine engine(3, {.timeout = 60s, .label = {}});
  std::vector<std::vector<int>> sums(3), got(3);
  EXPECT_EQ(run_ranks(engine,
                      [&](int r) {
                        sum_round(engine, r, 2, &sums[r]);
                        const int next = (r + 1) % 3, prev = (r + 2) % 3;
                        engine.post(r, next, 5, {r, 10 * r});
                        engine.post(r, next, 5, {r + 100});
                        got[r] = engine.take(r, prev, 5);
                        const std::vector<int> second = engine.take(r, prev, 5);
                        got[r].insert(got[r].end(), second.begin(), second.end());
                        sum_round(engine, r, 1);
                      }),
            "");
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[r], (std::vector<int>{6, 6}));
    const int prev = (r + 2) % 3;
    EXPECT_EQ(got[r], (std::vector<int>{prev, 10 * prev, prev + 100}));
  }
}

TEST(Rendezvous, MissingRankThatComputesIsNamedAtTheDeadline) {
  Engine engine(3, {.timeout = 200ms, .label = {}});
  std::latch others_failed(2);
  const std::string message = run_ranks(engine, [&](int r) {
    if (r == 2) return others_failed.wait();  // computing until the others have given up
    try {
      sum_round(engine, r, 1);
    } catch (const Error&) {
      others_failed.count_down();
      throw;
    }
  });
  expect_contains(message, {"all_reduce #0 timed out after 200 ms", "missing: rank 2 (running)"});
  EXPECT_EQ(message.find("deadlock"), std::string::npos) << message;
}

TEST(Rendezvous, MissingRankThatReturnedIsNamedAtOnce) {
  Engine engine(3, {.timeout = 60s, .label = "device-sim "});
  const auto start = Clock::now();
  const std::string message = run_ranks(engine, [&](int r) {
    if (r != 1) sum_round(engine, r, 1);
  });
  expect_contains(message, {"device-sim all_reduce #0: rank 1 returned without joining it",
                            "wait-for:", "rank 1 has finished"});
  EXPECT_LT(Clock::now() - start, 20s);  // far below the timeout: it never came into play
}

TEST(Rendezvous, PartsOfTheWrongSizeFailOnEveryRank) {
  Engine engine(3, {.timeout = 60s, .label = {}});
  std::vector<std::string> errors(3);
  run_ranks(engine,
            [&](int r) { errors[r] = error_of([&] { sum_round(engine, r, r == 1 ? 3 : 2); }); });
  for (int r = 0; r < 3; ++r)
    expect_contains(errors[r], {"all_reduce #0: rank 1 sends 3 elements, rank 0 sends 2"});
  EXPECT_TRUE(engine.aborted());
}

TEST(Rendezvous, DifferentCallsAreAMismatch) {
  Engine engine(2, {.timeout = 60s, .label = {}});
  const std::string message = run_ranks(engine, [&](int r) {
    if (r == 0) return sum_round(engine, r, 1);
    engine.join(r, "barrier", {}, [](std::int64_t, const std::vector<std::vector<int>>&) {});
  });
  expect_contains(message, {"collective #0 mismatch", "all_reduce", "barrier"});
}

TEST(Rendezvous, AFailingRankReleasesTheWaitingOnesAtOnce) {
  Engine engine(4, {.timeout = 60s, .label = {}});
  std::vector<std::string> errors(4);
  const auto start = Clock::now();
  const std::string message = run_ranks(engine, [&](int r) {
    if (r == 3) CPLAB_FAIL("boom");
    errors[r] = error_of([&] { r == 0 ? (void)engine.take(0, 3, 1) : sum_round(engine, r, 1); });
  });
  EXPECT_LT(Clock::now() - start, 20s);
  expect_contains(message, {"boom"});
  expect_contains(errors[0], {"recv from rank 3 (tag 1): released because rank 3 failed", "boom"});
  expect_contains(errors[1], {"all_reduce #0: released because rank 3 failed", "boom"});
}

TEST(Rendezvous, ASkippedSendIsADeadlockReportedAtOnceWithThePicture) {
  // The timeout is a minute; the error must come from the deadlock check, long before it.
  Engine engine(4, {.timeout = 60s, .label = {}});
  const auto start = Clock::now();
  const std::string message = run_ranks(engine, [&](int r) {
    // Rank 1 should send rank 2 its part, but skips it; everyone then meets in a collective.
    if (r == 2) (void)engine.take(2, 1, 7);
    sum_round(engine, r, 1);
  });
  EXPECT_LT(Clock::now() - start, 20s);
  expect_contains(message, {"deadlock", "ranks 0, 1 and 3 wait in all_reduce #0",
                            "rank 2 waits in recv from rank 1 tag 7"});
  EXPECT_EQ(message.find("timed out"), std::string::npos) << message;
}

TEST(Rendezvous, ACycleOfReceivesIsADeadlock) {
  Engine engine(2, {.timeout = 60s, .label = {}});
  const std::string message = run_ranks(engine, [&](int r) { (void)engine.take(r, 1 - r, 3); });
  expect_contains(message, {"deadlock", "rank 0 waits in recv from rank 1 tag 3",
                            "rank 1 waits in recv from rank 0 tag 3"});
}

TEST(Rendezvous, FinishedRanksCountAsGoneInTheDeadlockCheck) {
  // Rank 2 leaves; ranks 0 and 1 then wait on each other: neither can move, and rank 2 never can.
  Engine engine(3, {.timeout = 60s, .label = {}});
  const std::string message = run_ranks(engine, [&](int r) {
    if (r == 2) return;
    engine.await_state([](const auto& ranks) { return ranks[2].left(); });
    (void)engine.take(r, 1 - r, 3);
  });
  expect_contains(message, {"deadlock", "rank 2 has finished"});
}

TEST(Rendezvous, RanksThatComputeAreNeverTakenForDeadlocked) {
  // Ranks 0 and 2 wait for rank 1 while it computes: every other rank waits, yet nothing is stuck.
  Engine engine(3, {.timeout = 60s, .label = {}});
  std::vector<int> got(3, -1);
  EXPECT_EQ(run_ranks(engine,
                      [&](int r) {
                        if (r != 1) {
                          got[r] = engine.take(r, 1, 2).at(0);
                          return;
                        }
                        engine.await_state([](const auto& ranks) {
                          return ranks[0].kind == Kind::recv && ranks[2].kind == Kind::recv;
                        });
                        engine.post(1, 0, 2, {10});
                        engine.post(1, 2, 2, {12});
                      }),
            "");
  EXPECT_EQ(got, (std::vector<int>{10, -1, 12}));
}

TEST(Rendezvous, ABusyRankIsNotDeadlockedEither) {
  Engine engine(2, {.timeout = 60s, .label = {}});
  EXPECT_EQ(run_ranks(engine,
                      [&](int r) {
                        if (r == 1) {
                          engine.await_state(
                              [](const auto& ranks) { return ranks[0].kind == Kind::recv; });
                          engine.pause(1, 20ms, "delayed");
                          engine.post(1, 0, 0, {1});
                        } else {
                          (void)engine.take(0, 1, 0);
                        }
                      }),
            "");
}

}  // namespace
}  // namespace cplab::commtest
