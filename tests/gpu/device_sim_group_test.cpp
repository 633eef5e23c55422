// The device-sim comm's meeting point on the host, without a device: its ranks are threads that
// call the group as DeviceSimComm does (arrive, the completion rendezvous, post / take / finish /
// wait_done). It shares ThreadComm's engine, so it gets the same answers: disagreeing counts
// named on every rank, a missing rank named (at once when it has left, at the deadline while it
// computes), a failure that breaks the group, and deadlocks reported at once with the picture.
#include "gpu/comm/device_sim_group.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <thread>

#include "tests/support/fixtures.hpp"

namespace cplab::gputest {
namespace {

using namespace std::chrono_literals;
using gpu::detail::Arrival;
using gpu::detail::SimGroup;
using testsupport::error_of;
using Clock = std::chrono::steady_clock;

// body(rank) on every rank's thread, leaving the group as DeviceSimWorld::run does; the first
// failure's message, "" when none.
std::string run_ranks(SimGroup& group, const std::function<void(int)>& body) {
  std::vector<std::jthread> threads;
  for (int r = 0; r < group.size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
        group.returned(r);
      } catch (const std::exception& e) {
        group.failed(r, std::current_exception(), e.what());
      }
    });
  }
  threads.clear();
  return error_of([&] {
    if (auto failure = group.first_failure()) std::rethrow_exception(failure);
  });
}

void expect_contains(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n  in: " << message;
}

Arrival reduce_of(std::size_t count) {
  return {.op = "all_reduce",
          .send = nullptr,
          .recv = nullptr,
          .count = count,
          .capacity = 0,
          .dtype = DType::f32,
          .reduce = ReduceOp::sum};
}

// What DeviceSimComm::all_reduce does with the group, without the copies.
void all_reduce(SimGroup& group, int rank, std::size_t count = 4) {
  const std::vector<Arrival> peers = group.arrive(rank, reduce_of(count), true);
  EXPECT_EQ(peers.size(), static_cast<std::size_t>(group.size));
  group.rendezvous(rank, "all_reduce (completion)");
}

TEST(DeviceSimGroup, EveryRankSeesEveryArrivalAndMessagesAreHandedOver) {
  SimGroup group(3, 0, 60s);
  std::vector<int> received(3, -1);
  EXPECT_EQ(run_ranks(group,
                      [&](int r) {
                        all_reduce(group, r);
                        static int values[3] = {10, 11, 12};
                        const int next = (r + 1) % 3, prev = (r + 2) % 3;
                        const auto mine = group.post(r, next, 7, &values[r], 1, DType::i32);
                        const auto theirs = group.take(prev, r, 7);
                        received[r] = *static_cast<const int*>(theirs->buf);
                        group.finish(theirs, {});
                        group.wait_done(r, next, 7, mine);
                        all_reduce(group, r);
                      }),
            "");
  EXPECT_EQ(received, (std::vector<int>{12, 10, 11}));
  EXPECT_FALSE(group.aborted());
}

TEST(DeviceSimGroup, ARankThatLeavesABarrierFirstCannotDisturbItsSlowerPeers) {
  // Barriers of one round each, back to back with other calls: a fast rank's next arrival must
  // land in the next round, never in the one a slower rank is still reading.
  SimGroup group(4, 0, 60s);
  EXPECT_EQ(run_ranks(group,
                      [&](int r) {
                        for (int i = 0; i < 200; ++i) {
                          group.arrive(r, {.op = "barrier"}, true);
                          EXPECT_EQ(group.arrive(r, reduce_of(3), true).size(), 4u);
                        }
                      }),
            "");
}

TEST(DeviceSimGroup, DisagreeingCountsAreAnErrorOnEveryRank) {
  SimGroup group(3, 0, 60s);
  std::vector<std::string> errors(3);
  run_ranks(group,
            [&](int r) { errors[r] = error_of([&] { all_reduce(group, r, r == 1 ? 3 : 2); }); });
  for (const std::string& e : errors)
    expect_contains(e, {"rank 1 passes count 3 but rank 0 passes 2"});
  EXPECT_TRUE(group.aborted());
}

TEST(DeviceSimGroup, ARankThatReturnedIsNamedAtOnce) {
  SimGroup group(3, 0, 60s);
  const auto start = Clock::now();
  const std::string message = run_ranks(group, [&](int r) {
    if (r != 2) all_reduce(group, r);
  });
  EXPECT_LT(Clock::now() - start, 20s);
  expect_contains(message, {"device-sim all_reduce #0: rank 2 returned without joining it"});
}

TEST(DeviceSimGroup, ARankThatComputesIsNamedAtTheDeadline) {
  SimGroup group(3, 0, 200ms);
  std::latch others_failed(2);
  const std::string message = run_ranks(group, [&](int r) {
    if (r == 2) return others_failed.wait();
    try {
      all_reduce(group, r);
    } catch (const Error&) {
      others_failed.count_down();
      throw;
    }
  });
  expect_contains(message,
                  {"device-sim all_reduce #0 timed out after 200 ms", "missing: rank 2 (running)"});
}

TEST(DeviceSimGroup, AFailureBreaksTheGroupAndReleasesTheWaitingRanks) {
  SimGroup group(3, 0, 60s);
  std::vector<std::string> errors(3);
  const std::string message = run_ranks(group, [&](int r) {
    if (r == 0) CPLAB_FAIL("copy failed");
    errors[r] = error_of([&] { all_reduce(group, r); });
  });
  expect_contains(message, {"copy failed"});
  expect_contains(errors[1], {"device-sim all_reduce #0: released because rank 0 failed"});
  EXPECT_TRUE(group.aborted());
}

TEST(DeviceSimGroup, ASkippedSendIsADeadlockReportedAtOnce) {
  SimGroup group(2, 0, 60s);
  const auto start = Clock::now();
  const std::string message = run_ranks(group, [&](int r) {
    if (r == 1) (void)group.take(0, 1, 7);  // rank 0 never sends it
    all_reduce(group, r);
  });
  EXPECT_LT(Clock::now() - start, 20s);
  expect_contains(message, {"device-sim deadlock", "rank 0 waits in all_reduce #0",
                            "rank 1 waits in recv from rank 0 tag 7"});
}

TEST(DeviceSimGroup, ASendNobodyReceivesIsADeadlockReportedAtOnce) {
  SimGroup group(2, 0, 60s);
  static int value = 5;
  const std::string message = run_ranks(group, [&](int r) {
    if (r == 0) group.wait_done(0, 1, 3, group.post(0, 1, 3, &value, 1, DType::i32));
    all_reduce(group, r);
  });
  expect_contains(message, {"deadlock", "rank 0 waits in send to rank 1 tag 3",
                            "rank 1 waits in all_reduce #0"});
}

}  // namespace
}  // namespace cplab::gputest
