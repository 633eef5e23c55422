// ThreadComm's collectives compute what comm/comm.hpp says, for several C, and count the bytes of
// wire_bytes.hpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "comm/thread_comm.hpp"
#include "comm/wire_bytes.hpp"
#include "tests/comm/test_world.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::commtest {
namespace {

using testsupport::cp_sizes;
using testsupport::Ints;

using sim::RankContext;
using World = sim::testing::TestWorld;  // threads, or fibers (test_world.hpp)

class CommTest : public ::testing::TestWithParam<std::int64_t> {
 protected:
  int cp() const { return static_cast<int>(GetParam()); }
};

// A value only rank r's element i has.
std::int64_t mark(int r, std::size_t i) { return 100 * r + static_cast<std::int64_t>(i) + 1; }

TEST_P(CommTest, all_gather_concatenates_in_rank_order) {
  World world(cp());
  std::vector<Ints> got(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    Ints mine = {mark(ctx.rank, 0), mark(ctx.rank, 1), mark(ctx.rank, 2)};
    Ints all(3 * static_cast<std::size_t>(ctx.size));
    ctx.comm.all_gather(bytes_of(mine), bytes_of(all), 3, DType::i64);
    got[ctx.rank] = all;
  });
  for (int r = 0; r < cp(); ++r) {
    for (int p = 0; p < cp(); ++p) {
      for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(got[r][p * 3 + i], mark(p, i));
    }
  }
  for (int r = 0; r < cp(); ++r) {
    EXPECT_EQ(world.bytes_sent()[r],
              sim::wire_bytes::all_gather(3, 8, static_cast<std::uint64_t>(cp())));
  }
}

TEST_P(CommTest, all_gather_v_takes_each_ranks_own_count) {
  World world(cp());
  std::vector<Ints> got(static_cast<std::size_t>(cp()));
  std::vector<std::vector<std::size_t>> counts(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    Ints mine(static_cast<std::size_t>(ctx.rank) + 1);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = mark(ctx.rank, i);
    Ints all(64, -1);
    counts[ctx.rank] =
        ctx.comm.all_gather_v(bytes_of(mine), mine.size(), bytes_of(all), DType::i64);
    got[ctx.rank] = all;
  });
  for (int r = 0; r < cp(); ++r) {
    std::size_t at = 0;
    ASSERT_EQ(counts[r].size(), static_cast<std::size_t>(cp()));
    for (int p = 0; p < cp(); ++p) {
      EXPECT_EQ(counts[r][p], static_cast<std::size_t>(p) + 1);
      for (std::size_t i = 0; i <= static_cast<std::size_t>(p); ++i)
        EXPECT_EQ(got[r][at++], mark(p, i));
    }
    EXPECT_EQ(got[r][at], -1) << "nothing written past the gathered elements";
  }
}

TEST_P(CommTest, all_reduce_sums_and_maxes) {
  World world(cp());
  std::vector<Ints> sums(static_cast<std::size_t>(cp()));
  std::vector<std::vector<float>> maxes(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    Ints sum = {mark(ctx.rank, 0), mark(ctx.rank, 1)};
    ctx.comm.all_reduce(bytes_of(sum), 2, DType::i64, ReduceOp::sum);
    std::vector<float> max = {static_cast<float>(ctx.rank), -static_cast<float>(ctx.rank)};
    ctx.comm.all_reduce(bytes_of(max), 2, DType::f32, ReduceOp::max);
    sums[ctx.rank] = sum;
    maxes[ctx.rank] = max;
  });
  for (int r = 0; r < cp(); ++r) {
    for (std::size_t i = 0; i < 2; ++i) {
      std::int64_t expected = 0;
      for (int p = 0; p < cp(); ++p) expected += mark(p, i);
      EXPECT_EQ(sums[r][i], expected);
    }
    EXPECT_EQ(maxes[r][0], static_cast<float>(cp() - 1));
    EXPECT_EQ(maxes[r][1], 0.0f);
  }
}

TEST_P(CommTest, reduce_scatter_gives_each_rank_the_sum_of_its_block) {
  World world(cp());
  std::vector<Ints> got(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    Ints send(2 * static_cast<std::size_t>(ctx.size));
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = mark(ctx.rank, i);
    Ints mine(2);
    ctx.comm.reduce_scatter(bytes_of(send), bytes_of(mine), 2, DType::i64, ReduceOp::sum);
    got[ctx.rank] = mine;
  });
  for (int r = 0; r < cp(); ++r) {
    for (std::size_t i = 0; i < 2; ++i) {
      std::int64_t expected = 0;
      for (int p = 0; p < cp(); ++p) expected += mark(p, 2 * static_cast<std::size_t>(r) + i);
      EXPECT_EQ(got[r][i], expected);
    }
  }
}

TEST_P(CommTest, all_to_all_transposes_blocks) {
  World world(cp());
  std::vector<Ints> got(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    Ints send(static_cast<std::size_t>(ctx.size));
    for (std::size_t p = 0; p < send.size(); ++p)
      send[p] = mark(ctx.rank, p);  // block p for rank p
    Ints recv(send.size());
    ctx.comm.all_to_all(bytes_of(send), bytes_of(recv), 1, DType::i64);
    got[ctx.rank] = recv;
  });
  for (int r = 0; r < cp(); ++r) {
    for (int p = 0; p < cp(); ++p) EXPECT_EQ(got[r][p], mark(p, static_cast<std::size_t>(r)));
  }
}

TEST_P(CommTest, ring_send_recv_and_barrier) {
  World world(cp());
  std::vector<std::int64_t> from_left(static_cast<std::size_t>(cp()));
  std::vector<std::int64_t> exchanged(static_cast<std::size_t>(cp()));
  world.run([&](RankContext& ctx) {
    const int right = (ctx.rank + 1) % ctx.size, left = (ctx.rank + ctx.size - 1) % ctx.size;
    const std::int64_t mine = mark(ctx.rank, 0);
    ctx.comm.send({&mine, sizeof mine}, 1, DType::i64, right, 7);
    ctx.comm.recv({&from_left[ctx.rank], sizeof from_left[ctx.rank]}, 1, DType::i64, left, 7);
    ctx.comm.barrier();
    ctx.comm.send_recv({&mine, sizeof mine}, 1, left,
                       {&exchanged[ctx.rank], sizeof exchanged[ctx.rank]}, 1, right, DType::i64, 8);
  });
  for (int r = 0; r < cp(); ++r) {
    EXPECT_EQ(from_left[r], mark((r + cp() - 1) % cp(), 0));
    EXPECT_EQ(exchanged[r], mark((r + 1) % cp(), 0));
    EXPECT_EQ(world.bytes_sent()[r], 16u);
  }
}

// Parts this large are read in place from the senders' buffers (thread_comm.cpp's kLendBytes is
// 64 KiB): each rank overwrites its send buffer as soon as a collective returns, so a sender let go
// before the others had read it shows as wrong elements (and as a race under TSan). The in-place
// all-gather (the send buffer is this rank's block of the receive buffer) is one of them, and so
// are the messages of send_recv, also one whose receiver comes after its sender has gone on.
TEST_P(CommTest, large_parts_are_read_before_their_senders_go_on) {
  World world(cp());
  const std::size_t count = 16 * 1024;  // 128 KiB of i64 per block
  const auto n = static_cast<std::size_t>(cp());
  std::vector<std::string> wrong(n);
  world.run([&](RankContext& ctx) {
    const auto r = static_cast<std::size_t>(ctx.rank);
    const auto expect = [&](bool ok, const char* what, int round) {
      if (!ok && wrong[r].empty()) wrong[r] = fmt::format("{} round {}", what, round);
    };
    Ints send(count * n), recv(count * n);
    for (int round = 0; round < 3; ++round) {
      const auto value = [&](std::size_t p, std::size_t i) {
        return mark(static_cast<int>(p), i) + 1000000 * round;
      };
      for (std::size_t i = 0; i < count; ++i) send[i] = value(r, i);
      ctx.comm.all_gather(bytes_of(send), bytes_of(recv), count, DType::i64);
      std::fill(send.begin(), send.end(), -1);
      for (std::size_t p = 0; p < n; ++p)
        expect(recv[p * count + count - 1] == value(p, count - 1), "all_gather", round);

      for (std::size_t i = 0; i < count; ++i) recv[r * count + i] = value(r, i);
      ctx.comm.all_gather({recv.data() + r * count, count * sizeof(std::int64_t)}, bytes_of(recv),
                          count, DType::i64);
      for (std::size_t p = 0; p < n; ++p)
        expect(recv[p * count] == value(p, 0), "in-place all_gather", round);
      std::fill(recv.begin(), recv.end(), -1);

      for (std::size_t i = 0; i < count * n; ++i) send[i] = value(r, i);
      ctx.comm.all_to_all(bytes_of(send), bytes_of(recv), count, DType::i64);
      std::fill(send.begin(), send.end(), -1);
      for (std::size_t p = 0; p < n; ++p)
        expect(recv[p * count] == value(p, r * count), "all_to_all", round);

      for (std::size_t i = 0; i < count * n; ++i) send[i] = value(r, i);
      ctx.comm.reduce_scatter(bytes_of(send), bytes_of(recv), count, DType::i64, ReduceOp::max);
      std::fill(send.begin(), send.end(), -1);
      expect(recv[0] == value(n - 1, r * count), "reduce_scatter", round);

      // A message around the ring, taken while its sender waits for its own; then one whose
      // receiver comes only after a barrier, so that its sender goes on first.
      const int right = (ctx.rank + 1) % ctx.size, left = (ctx.rank + ctx.size - 1) % ctx.size;
      for (std::size_t i = 0; i < count; ++i) send[i] = value(r, i);
      ctx.comm.send_recv(bytes_of(send), count, right, bytes_of(recv), count, left, DType::i64, 3);
      std::fill(send.begin(), send.end(), -1);
      expect(recv[count - 1] == value(static_cast<std::size_t>(left), count - 1), "send_recv",
             round);
      const int partner = ctx.rank ^ 1;  // pairs (0, 1), (2, 3), ...; an odd C leaves one out
      const bool paired = partner < ctx.size;
      if (paired && ctx.rank % 2 == 0) {
        for (std::size_t i = 0; i < count; ++i) send[i] = value(r, i);
        ctx.comm.send_recv(bytes_of(send), count, partner, bytes_of(recv), 1, partner, DType::i64,
                           4);
        std::fill(send.begin(), send.end(), -1);
      } else if (paired) {
        const std::int64_t one = 0;
        ctx.comm.send({&one, sizeof one}, 1, DType::i64, partner, 4);
      }
      ctx.comm.barrier();
      if (paired && ctx.rank % 2 == 1) {
        ctx.comm.recv(bytes_of(recv), count, DType::i64, partner, 4);
        expect(recv[count - 1] == value(static_cast<std::size_t>(partner), count - 1),
               "a late receive", round);
      }
    }
  });
  for (std::size_t r = 0; r < n; ++r) EXPECT_EQ(wrong[r], "") << "rank " << r;
}

std::string cp_name(const ::testing::TestParamInfo<std::int64_t>& param_info) {
  return "cp" + std::to_string(param_info.param);
}
INSTANTIATE_TEST_SUITE_P(Sizes, CommTest, ::testing::ValuesIn(cp_sizes()), cp_name);

TEST(WireBytes, ring_formulas) {
  EXPECT_EQ(sim::wire_bytes::all_gather(5, 4, 1), 0u);
  EXPECT_EQ(sim::wire_bytes::all_gather(5, 4, 4), 60u);
  EXPECT_EQ(sim::wire_bytes::reduce_scatter(5, 4, 4), 60u);
  EXPECT_EQ(sim::wire_bytes::all_reduce(8, 8, 4), 2u * 3u * 2u * 8u);
  EXPECT_EQ(sim::wire_bytes::all_reduce(1, 8, 4), 2u * 3u * 1u * 8u);
  EXPECT_EQ(sim::wire_bytes::all_to_all(2, 8, 3), 32u);
}

}  // namespace
}  // namespace cplab::commtest
