// The one-GPU device-sim comm: every collective's result on C virtual ranks, disagreeing counts
// and a missing rank reported by name (never a hang), and the bootstrap over a host comm.
#include "gpu/comm/device_sim_comm.hpp"

#include <atomic>

#include "comm/thread_comm.hpp"
#include "core/error.hpp"
#include "gpu/comm/bootstrap.hpp"
#include "gpu_test.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::gputest {
namespace {

using gpu::DeviceBuffer;
using testsupport::error_of;
using testsupport::Ints;

class DeviceSimComm : public GpuParamTest<int> {};

TEST_P(DeviceSimComm, collectives_give_every_rank_the_expected_blocks) {
  const int cp = GetParam();
  gpu::DeviceSimWorld world(cp);
  std::atomic<int> done{0};
  world.run([&](gpu::DeviceSimComm& comm) {
    const std::int64_t r = comm.rank();
    const gpu::Stream s = comm.stream();
    // all_gather: rank r sends [10r, 10r+1, 10r+2].
    DeviceBuffer mine = gpu::upload_vector(Ints{10 * r, 10 * r + 1, 10 * r + 2}, s),
                 all(8 * 3 * cp);
    comm.all_gather({mine.get(), mine.bytes()}, {all.get(), all.bytes()}, 3, DType::i64);
    Ints expected;
    for (std::int64_t p = 0; p < cp; ++p)
      expected.insert(expected.end(), {10 * p, 10 * p + 1, 10 * p + 2});
    EXPECT_EQ(gpu::download_vector<std::int64_t>(all, 3 * cp, s), expected);

    // all_gather_v: rank r sends r+1 copies of r.
    DeviceBuffer var = gpu::upload_vector(Ints(static_cast<std::size_t>(r + 1), r), s),
                 var_all(8 * cp * cp);
    const auto counts = comm.all_gather_v({var.get(), var.bytes()}, static_cast<std::size_t>(r + 1),
                                          {var_all.get(), var_all.bytes()}, DType::i64);
    Ints var_expected;
    for (std::int64_t p = 0; p < cp; ++p) {
      EXPECT_EQ(counts[p], static_cast<std::size_t>(p + 1));
      var_expected.insert(var_expected.end(), static_cast<std::size_t>(p + 1), p);
    }
    EXPECT_EQ(gpu::download_vector<std::int64_t>(var_all, var_expected.size(), s), var_expected);

    // all_reduce in place: sum and max of [r, -r].
    DeviceBuffer red =
        gpu::upload_vector(std::vector<float>{static_cast<float>(r), -static_cast<float>(r)}, s);
    comm.all_reduce({red.get(), red.bytes()}, 2, DType::f32, ReduceOp::sum);
    const float total = static_cast<float>(cp * (cp - 1) / 2);
    EXPECT_EQ(gpu::download_vector<float>(red, 2, s), (std::vector<float>{total, -total}));
    DeviceBuffer mx = gpu::upload_vector(Ints{r, -r}, s);
    comm.all_reduce({mx.get(), mx.bytes()}, 2, DType::i64, ReduceOp::max);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(mx, 2, s), (Ints{cp - 1, 0}));

    // reduce_scatter: rank r sends block p = [100p + r]; rank r gets Σ_q (100r + q).
    Ints blocks;
    for (std::int64_t p = 0; p < cp; ++p) blocks.push_back(100 * p + r);
    DeviceBuffer rs = gpu::upload_vector(blocks, s), rs_out(8);
    comm.reduce_scatter({rs.get(), rs.bytes()}, {rs_out.get(), rs_out.bytes()}, 1, DType::i64,
                        ReduceOp::sum);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(rs_out, 1, s)[0],
              100 * r * cp + cp * (cp - 1) / 2);

    // all_to_all: block p of rank r is 1000r + p; rank r receives 1000p + r from every p.
    Ints out_blocks, in_expected;
    for (std::int64_t p = 0; p < cp; ++p) {
      out_blocks.push_back(1000 * r + p);
      in_expected.push_back(1000 * p + r);
    }
    DeviceBuffer a2a = gpu::upload_vector(out_blocks, s), a2a_in(8 * cp);
    comm.all_to_all({a2a.get(), a2a.bytes()}, {a2a_in.get(), a2a_in.bytes()}, 1, DType::i64);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(a2a_in, cp, s), in_expected);

    // A ring of send_recv: each rank sends r to r+1 and receives r-1 from r-1.
    const int next = static_cast<int>((r + 1) % cp), prev = static_cast<int>((r + cp - 1) % cp);
    DeviceBuffer ring = gpu::upload_vector(Ints{r}, s), ring_in(8);
    comm.send_recv({ring.get(), ring.bytes()}, 1, next, {ring_in.get(), ring_in.bytes()}, 1, prev,
                   DType::i64, 7);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(ring_in, 1, s)[0], prev);
    comm.barrier();
    EXPECT_GT(comm.bytes_sent() + (cp == 1 ? 1u : 0u), 0u);
    ++done;
  });
  EXPECT_EQ(done.load(), cp);
}

// Failures need a second rank: one rank always agrees with itself and is never missing.
class DeviceSimCommErrors : public GpuParamTest<int> {};

TEST_P(DeviceSimCommErrors, disagreeing_counts_are_an_error_naming_them) {
  const int cp = GetParam();
  gpu::DeviceSimWorld world(cp, {.timeout = std::chrono::milliseconds(5000)});
  const std::string message = error_of([&] {
    world.run([&](gpu::DeviceSimComm& comm) {
      DeviceBuffer buf(8 * 4), out(8 * 4 * cp);
      comm.all_gather({buf.get(), buf.bytes()}, {out.get(), out.bytes()}, comm.rank() == 1 ? 3 : 2,
                      DType::i64);
    });
  });
  EXPECT_NE(message.find("rank 1 passes count 3 but rank 0 passes 2"), std::string::npos)
      << message;
}

// A count longer than the device buffer it comes with is refused on its rank before the group
// reads any of it; the others are released at once (the timeout is far off).
TEST_P(DeviceSimCommErrors, a_send_longer_than_its_buffer_is_named_before_any_copy) {
  const int cp = GetParam();
  gpu::DeviceSimWorld world(cp);  // a minute's timeout: the error must not wait for it
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] {
    world.run([&](gpu::DeviceSimComm& comm) {
      DeviceBuffer buf(comm.rank() == 1 ? 8 * 2 : 8 * 3), out(8 * 3 * cp);
      comm.all_gather({buf.get(), buf.bytes()}, {out.get(), out.bytes()}, 3, DType::i64);
    });
  });
  EXPECT_NE(message.find("rank 1/" + std::to_string(cp) + ": all_gather send (device-sim comm)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("3 x i64 (24 bytes) do not fit its buffer of 16 bytes"), std::string::npos)
      << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST_P(DeviceSimCommErrors, a_rank_that_returned_is_named_at_once) {
  const int cp = GetParam();
  gpu::DeviceSimWorld world(cp);  // a minute's timeout: the error must not wait for it
  const std::string message = error_of([&] {
    world.run([&](gpu::DeviceSimComm& comm) {
      if (comm.rank() == cp - 1) return;  // never joins
      DeviceBuffer buf(8);
      comm.all_reduce({buf.get(), buf.bytes()}, 1, DType::i64, ReduceOp::sum);
    });
  });
  EXPECT_NE(message.find("device-sim all_reduce #0: rank " + std::to_string(cp - 1) +
                         " returned without joining it"),
            std::string::npos)
      << message;
}

TEST_P(DeviceSimCommErrors, a_rank_that_never_arrives_is_named_after_the_timeout) {
  const int cp = GetParam();
  // Long enough that every joining rank has arrived when the first waiter gives up, even with 8
  // test processes sharing the machine: the message must name rank cp-1 alone as missing.
  gpu::DeviceSimWorld world(cp, {.timeout = std::chrono::milliseconds(1500)});
  std::atomic<bool> others_failed{false};
  const std::string message = error_of([&] {
    world.run([&](gpu::DeviceSimComm& comm) {
      if (comm.rank() == cp - 1) {  // computing (not in the comm) until the others gave up
        others_failed.wait(false);
        return;
      }
      DeviceBuffer buf(8);
      try {
        comm.all_reduce({buf.get(), buf.bytes()}, 1, DType::i64, ReduceOp::sum);
      } catch (const Error&) {
        others_failed = true;
        others_failed.notify_all();
        throw;
      }
    });
  });
  EXPECT_NE(message.find("timed out after 1500 ms"), std::string::npos) << message;
  EXPECT_NE(message.find("missing: rank " + std::to_string(cp - 1) + " (running)"),
            std::string::npos)
      << message;
}

TEST_P(DeviceSimCommErrors, a_skipped_send_is_a_deadlock_named_at_once) {
  const int cp = GetParam();
  gpu::DeviceSimWorld world(cp);  // a minute's timeout: the deadlock check must end it first
  const std::string message = error_of([&] {
    world.run([&](gpu::DeviceSimComm& comm) {
      DeviceBuffer buf(8);
      // Rank 1 should have sent rank 0 a message (tag 5); it goes on to the all-reduce instead.
      if (comm.rank() == 0) comm.recv({buf.get(), buf.bytes()}, 1, DType::i64, 1, 5);
      comm.all_reduce({buf.get(), buf.bytes()}, 1, DType::i64, ReduceOp::sum);
    });
  });
  EXPECT_NE(message.find("device-sim deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 waits in recv from rank 1 tag 5"), std::string::npos) << message;
  EXPECT_EQ(message.find("timed out"), std::string::npos) << message;
}

TEST_P(DeviceSimCommErrors, a_bootstrapped_rank_whose_thread_ended_is_named_at_once) {
  const int cp = GetParam();
  sim::World host(cp);  // the device-sim world gets a minute's timeout: it must not wait for it
  const std::string message = error_of([&] {
    host.run([&](sim::RankContext& ctx) {
      gpu::DeviceComm& comm = gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::device_sim);
      if (ctx.comm.rank() == cp - 1) return;  // its thread ends without the all-reduce
      gpu::set_device(comm.device());
      DeviceBuffer one = gpu::upload_vector(Ints{1}, comm.stream());
      comm.all_reduce({one.get(), one.bytes()}, 1, DType::i64, ReduceOp::sum);
    });
  });
  EXPECT_NE(message.find("device-sim all_reduce #0: rank " + std::to_string(cp - 1) +
                         " returned without joining it"),
            std::string::npos)
      << message;
}

TEST_P(DeviceSimComm, bootstraps_over_a_host_comm_and_reuses_the_group) {
  const int cp = GetParam();
  sim::World host(cp);
  host.run([&](sim::RankContext& ctx) {
    gpu::DeviceComm& first = gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::device_sim);
    gpu::DeviceComm& again = gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::device_sim);
    EXPECT_EQ(&first, &again);
    EXPECT_EQ(first.name(), "device-sim");
    EXPECT_EQ(first.rank(), ctx.comm.rank());
    EXPECT_EQ(first.size(), cp);
    gpu::set_device(first.device());
    DeviceBuffer one = gpu::upload_vector(Ints{1}, first.stream());
    first.all_reduce({one.get(), one.bytes()}, 1, DType::i64, ReduceOp::sum);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(one, 1, first.stream())[0], cp);
  });
}

std::string cp_name(const ::testing::TestParamInfo<int>& param) {
  return "cp" + std::to_string(param.param);
}
INSTANTIATE_TEST_SUITE_P(Ranks, DeviceSimComm, ::testing::Values(1, 2, 3, 4, 8), cp_name);
INSTANTIATE_TEST_SUITE_P(Ranks, DeviceSimCommErrors, ::testing::Values(2, 3, 4, 8), cp_name);

}  // namespace
}  // namespace cplab::gputest
