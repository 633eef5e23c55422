// MpiComm under mpirun -np 3: every collective against what it must return, and every way a
// collective cannot complete ending in an error that names the ranks, on every process.
#include "mpi/mpi_comm.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mpi/rank_runner.hpp"
#include "mpi/session.hpp"

namespace cplab::mpi {
namespace {

using std::chrono::milliseconds;

// fn on every rank of a C=3 group; the error every process throws ("" when none).
std::string error_of(const std::function<void(Comm&, int)>& fn, milliseconds timeout) {
  try {
    run_ranks_as_processes(3, timeout, [&](Comm& comm, int rank) {
      fn(comm, rank);
      return std::string();
    });
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Busy, not waiting in the comm (a deadlock is never declared while a process computes).
void compute_for(milliseconds how_long) {
  volatile std::int64_t sink = 0;
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

class MpiCommTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(world().size, 3) << "run under mpirun -np 3"; }
};

TEST_F(MpiCommTest, EveryCollectiveGivesWhatItMust) {
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        ASSERT_EQ(comm.size(), 3);
        ASSERT_EQ(comm.rank(), rank);
        // all_gather
        const std::vector<std::int64_t> mine = {rank * 10, rank * 10 + 1};
        std::vector<std::int64_t> all(6);
        comm.all_gather(bytes_of(mine), bytes_of(all), 2, DType::i64);
        EXPECT_EQ(all, (std::vector<std::int64_t>{0, 1, 10, 11, 20, 21}));
        // all_gather_v: rank r sends r+1 elements
        std::vector<float> part(static_cast<std::size_t>(rank + 1), static_cast<float>(rank));
        std::vector<float> got(6);
        const auto counts =
            comm.all_gather_v(bytes_of(part), part.size(), bytes_of(got), DType::f32);
        EXPECT_EQ(counts, (std::vector<std::size_t>{1, 2, 3}));
        EXPECT_EQ(got, (std::vector<float>{0, 1, 1, 2, 2, 2}));
        // all_reduce sum and max
        std::vector<float> sum = {1.0f * static_cast<float>(rank), 2.0f};
        comm.all_reduce(bytes_of(sum), 2, DType::f32, ReduceOp::sum);
        EXPECT_EQ(sum, (std::vector<float>{3.0f, 6.0f}));
        std::vector<std::int32_t> top = {rank, -rank};
        comm.all_reduce(bytes_of(top), 2, DType::i32, ReduceOp::max);
        EXPECT_EQ(top, (std::vector<std::int32_t>{2, 0}));
        // reduce_scatter: block p of rank r holds r + p
        std::vector<std::int64_t> blocks = {rank + 0, rank + 1, rank + 2};
        std::int64_t reduced = -1;
        comm.reduce_scatter(bytes_of(blocks), {&reduced, sizeof reduced}, 1, DType::i64,
                            ReduceOp::sum);
        EXPECT_EQ(reduced, 3 * rank + 3);
        // all_to_all: rank r sends 100r + p to rank p
        std::vector<std::int64_t> out = {100 * rank, 100 * rank + 1, 100 * rank + 2}, in(3);
        comm.all_to_all(bytes_of(out), bytes_of(in), 1, DType::i64);
        EXPECT_EQ(in, (std::vector<std::int64_t>{rank, 100 + rank, 200 + rank}));
        // send_recv around the ring, then a plain send / recv pair with a tag
        const std::int64_t token = 7 + rank;
        std::int64_t from_left = -1;
        comm.send_recv({&token, sizeof token}, 1, (rank + 1) % 3, {&from_left, sizeof from_left}, 1,
                       (rank + 2) % 3, DType::i64, 5);
        EXPECT_EQ(from_left, 7 + (rank + 2) % 3);
        if (rank == 0) comm.send({&token, sizeof token}, 1, DType::i64, 2, 9);
        if (rank == 2) {
          std::int64_t v = -1;
          comm.recv({&v, sizeof v}, 1, DType::i64, 0, 9);
          EXPECT_EQ(v, 7);
        }
        comm.barrier();
      },
      milliseconds(20000));
  EXPECT_EQ(error, "");
}

TEST_F(MpiCommTest, ResultsReachEveryProcess) {
  const std::vector<std::string> results =
      run_ranks_as_processes(3, milliseconds(20000), [](Comm&, int rank) {
        return std::string(static_cast<std::size_t>(rank + 1), static_cast<char>('a' + rank));
      });
  EXPECT_EQ(results, (std::vector<std::string>{"a", "bb", "ccc"}));
}

TEST_F(MpiCommTest, SizesThatDisagreeAreNamedOnEveryRank) {
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        const std::size_t count = rank == 1 ? 4 : 3;
        std::vector<std::int64_t> mine(count), all(12);
        comm.all_gather(bytes_of(mine), bytes_of(all), count, DType::i64);
      },
      milliseconds(20000));
  EXPECT_NE(error.find("all_gather #0: sizes disagree: rank 0: 3 x i64, rank 1: 4 x i64, rank 2: "
                       "3 x i64"),
            std::string::npos)
      << error;
}

TEST_F(MpiCommTest, AnotherCollectiveIsNamed) {
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank, all[3];
        if (rank == 2) {
          comm.all_reduce({&v, sizeof v}, 1, DType::i64, ReduceOp::sum);
        } else {
          comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
        }
      },
      milliseconds(20000));
  // Either side of the mismatch may see it first (and stop the others): both name it.
  const bool seen_by_gatherers =
      error.find("rank 2 called all_reduce #0 instead") != std::string::npos;
  const bool seen_by_rank_2 =
      error.find("rank 2/3: all_reduce #0: rank 0 called all_gather #0 instead") !=
      std::string::npos;
  EXPECT_TRUE(seen_by_gatherers || seen_by_rank_2) << error;
}

TEST_F(MpiCommTest, RecvOfAnotherSizeIsNamed) {
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::vector<float> data(3, 1.0f);
        if (rank == 0) comm.send(bytes_of(data), 3, DType::f32, 1, 4);
        if (rank == 1) comm.recv(bytes_of(data), 2, DType::f32, 0, 4);
      },
      milliseconds(20000));
  EXPECT_NE(error.find("recv from rank 0 (tag 4): expected 2 x f32, rank 0 sent 3 x f32"),
            std::string::npos)
      << error;
}

// A count longer than the buffer it comes with is refused on the rank that passed it, before
// anything is posted; the others stop at once with its message (not at the timeout).
TEST_F(MpiCommTest, ASendLongerThanItsBufferIsNamedBeforeAnythingIsPosted) {
  const auto start = std::chrono::steady_clock::now();
  const std::string send_error = error_of(
      [](Comm& comm, int rank) {
        std::vector<float> data(rank == 1 ? 2 : 3, 1.0f), all(9);
        comm.all_gather(bytes_of(data), bytes_of(all), 3, DType::f32);
      },
      milliseconds(60000));
  EXPECT_NE(send_error.find("all_gather send (mpi comm"), std::string::npos) << send_error;
  EXPECT_NE(send_error.find("3 x f32 (12 bytes) do not fit its buffer of 8 bytes"),
            std::string::npos)
      << send_error;
  EXPECT_NE(send_error.find("rank 1"), std::string::npos) << send_error;
  const std::string recv_error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank;
        std::vector<std::int64_t> got(2);
        if (rank == 0) comm.send({&v, sizeof v}, 1, DType::i64, 2, 3);
        if (rank == 2) comm.recv(bytes_of(got), 3, DType::i64, 0, 3);
        comm.barrier();
      },
      milliseconds(60000));
  EXPECT_NE(recv_error.find("recv (mpi comm"), std::string::npos) << recv_error;
  EXPECT_NE(recv_error.find("3 x i64 (24 bytes) do not fit its buffer of 16 bytes"),
            std::string::npos)
      << recv_error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST_F(MpiCommTest, AFailingRankStopsTheOthersAtOnceWithItsMessage) {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        CPLAB_CHECK(rank != 1, "planted failure");
        comm.barrier();
      },
      milliseconds(60000));
  EXPECT_NE(error.find("rank 1/3: planted failure"), std::string::npos) << error;
  // The others learnt it from rank 1, not from the 60 s timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST_F(MpiCommTest, AWorldStaysUsableAfterAFailedRun) {
  (void)error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank, all[3];
        if (rank == 0) CPLAB_FAIL("rank 0 leaves before the gather");
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
      },
      milliseconds(20000));
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank, all[3];
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
        EXPECT_EQ(all[0] + all[1] + all[2], 3);
      },
      milliseconds(20000));
  EXPECT_EQ(error, "");
}

// A skipped send: rank 2 waits for a message rank 1 never sends, ranks 0 and 1 for rank 2 in the
// gather. Every process waits and nothing is on its way: all stop at once (not at the 60 s
// timeout) with the same wait-for picture, and the world stays usable.
TEST_F(MpiCommTest, ASkippedSendIsADeadlockNamedAtOnceWithTheWaitForPicture) {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank, all[3];
        // rank 1 would send v to rank 2 here (tag 7): the send is skipped
        if (rank == 2) comm.recv({&v, sizeof v}, 1, DType::i64, 1, 7);
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
      },
      milliseconds(60000));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(error.find("deadlock: every process of the job waits and nothing is on its way to any "
                       "of them: ranks 0 and 1 wait in all_gather #0; rank 2 waits in recv from "
                       "rank 1 tag 7"),
            std::string::npos)
      << error;
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000)) << error;
  EXPECT_FALSE(lost());
  EXPECT_EQ(error_of(
                [](Comm& comm, int rank) {
                  std::int64_t v = rank, all[3];
                  comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
                },
                milliseconds(20000)),
            "");
}

// Ranks that returned from the run have left it: the one still waiting for them is stopped.
TEST_F(MpiCommTest, AWaitForARankThatReturnedIsADeadlock) {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = -1;
        if (rank == 2) comm.recv({&v, sizeof v}, 1, DType::i64, 0, 3);
      },
      milliseconds(60000));
  EXPECT_NE(error.find("rank 2/3: recv from rank 0 (tag 3): deadlock: every process of the job "
                       "waits and nothing is on its way to any of them: ranks 0 and 1 have "
                       "finished; rank 2 waits in recv from rank 0 tag 3"),
            std::string::npos)
      << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000)) << error;
}

// A message on its way is no deadlock, however long every process has waited: rank 0 is slow to
// send (it computes), the others wait meanwhile and then receive.
TEST_F(MpiCommTest, ASlowSenderIsNoDeadlock) {
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        std::int64_t v = rank;
        if (rank == 0) {
          compute_for(milliseconds(200));
          comm.send({&v, sizeof v}, 1, DType::i64, 1, 2);
          comm.send({&v, sizeof v}, 1, DType::i64, 2, 2);
        } else {
          comm.recv({&v, sizeof v}, 1, DType::i64, 0, 2);
          EXPECT_EQ(v, 0);
        }
        std::int64_t all[3];
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
      },
      milliseconds(20000));
  EXPECT_EQ(error, "");
}

// Run alone (it leaves the world lost): rank 2 is busy past the timeout (busy is not stuck: no
// deadlock is declared while a process computes); the others name it at the timeout and leave,
// and the launcher then stops rank 2 (if it is not stopped, it names them at its own timeout).
TEST_F(MpiCommTest, LostRankIsNamedAtTheTimeout) {
  // In step first (processes may start far apart on a loaded machine): a run's result exchange
  // ends on every process within moments of each other.
  ASSERT_EQ(error_of([](Comm& comm, int) { comm.barrier(); }, milliseconds(60000)), "");
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        if (rank == 2) {
          compute_for(milliseconds(3000));
          return;
        }
        std::int64_t v = rank, all[3];
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
      },
      milliseconds(500));
  if (world().rank == 2) {
    EXPECT_NE(error.find("no word from ranks 0, 1 within 500 ms"), std::string::npos) << error;
  } else {
    EXPECT_NE(error.find("all_gather #0: no word from rank 2 within 500 ms (arrived: 0, 1)"),
              std::string::npos)
        << error;
  }
  EXPECT_TRUE(lost());
}

// Run alone (it leaves the world lost): rank 0 fails at once, rank 1 is stopped by its word, and
// rank 2 stays busy past the timeout, so the exchange of results cannot complete. What every
// process reports is the failure that started it, never the exchange that timed out after it.
TEST_F(MpiCommTest, LostRankAfterAFailureReportsTheFailure) {
  ASSERT_EQ(error_of([](Comm& comm, int) { comm.barrier(); }, milliseconds(60000)), "");
  const std::string error = error_of(
      [](Comm& comm, int rank) {
        if (rank == 0) throw Error("planted failure on rank 0");
        if (rank == 2) {
          compute_for(milliseconds(3000));
          return;
        }
        std::int64_t v = rank, all[3];
        comm.all_gather({&v, sizeof v}, {all, sizeof all}, 1, DType::i64);
      },
      milliseconds(500));
  if (world().rank != 2) {
    EXPECT_NE(error.find("planted failure on rank 0"), std::string::npos) << error;
    EXPECT_EQ(error.find("the results of run"), std::string::npos) << error;
  }
  EXPECT_TRUE(lost());
}

}  // namespace
}  // namespace cplab::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  cplab::mpi::finish();
  return status;
}
