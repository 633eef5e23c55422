// NcclComm on every visible GPU of this machine (one process, ncclCommInitAll, a thread per GPU),
// and bootstrapped over a host comm. With one GPU that is a group of one: still NCCL's code path.
#include "gpu/comm/nccl_comm.hpp"

#include "comm/thread_comm.hpp"
#include "core/error.hpp"
#include "gpu/comm/bootstrap.hpp"
#include "gpu_test.hpp"

namespace cplab::gputest {
namespace {

using gpu::DeviceBuffer;
using Ints = std::vector<std::int64_t>;

class NcclComm : public GpuTest {};

TEST_F(NcclComm, collectives_on_every_visible_device) {
  const int devices = gpu::device_count();
  std::vector<int> ids;
  for (int d = 0; d < devices; ++d) ids.push_back(d);
  gpu::NcclWorld world(ids);
  ASSERT_EQ(world.size(), devices);
  const std::int64_t cp = devices;
  world.run([&](gpu::NcclComm& comm) {
    const std::int64_t r = comm.rank();
    const gpu::Stream s = comm.stream();
    DeviceBuffer mine = gpu::upload_vector(Ints{r, 7}, s), all(16 * cp);
    comm.all_gather({mine.get(), mine.bytes()}, {all.get(), all.bytes()}, 2, DType::i64);
    Ints gathered;
    for (std::int64_t p = 0; p < cp; ++p) gathered.insert(gathered.end(), {p, 7});
    EXPECT_EQ(gpu::download_vector<std::int64_t>(all, 2 * cp, s), gathered);

    DeviceBuffer var = gpu::upload_vector(Ints(static_cast<std::size_t>(r + 1), r), s),
                 var_all(8 * cp * cp);
    comm.all_gather_v({var.get(), var.bytes()}, static_cast<std::size_t>(r + 1),
                      {var_all.get(), var_all.bytes()}, DType::i64);
    Ints var_expected;
    for (std::int64_t p = 0; p < cp; ++p)
      var_expected.insert(var_expected.end(), static_cast<std::size_t>(p + 1), p);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(var_all, var_expected.size(), s), var_expected);

    DeviceBuffer sum = gpu::upload_vector(std::vector<float>{1.5f}, s);
    comm.all_reduce({sum.get(), sum.bytes()}, 1, DType::f32, ReduceOp::sum);
    EXPECT_EQ(gpu::download_vector<float>(sum, 1, s)[0], 1.5f * static_cast<float>(cp));

    Ints blocks, in_expected;
    for (std::int64_t p = 0; p < cp; ++p) {
      blocks.push_back(1000 * r + p);
      in_expected.push_back(1000 * p + r);
    }
    DeviceBuffer rs = gpu::upload_vector(blocks, s), rs_out(8), a2a_in(8 * cp);
    comm.reduce_scatter({rs.get(), rs.bytes()}, {rs_out.get(), rs_out.bytes()}, 1, DType::i64,
                        ReduceOp::sum);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(rs_out, 1, s)[0],
              1000 * cp * (cp - 1) / 2 + cp * r);
    comm.all_to_all({rs.get(), rs.bytes()}, {a2a_in.get(), a2a_in.bytes()}, 1, DType::i64);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(a2a_in, cp, s), in_expected);

    const int next = static_cast<int>((r + 1) % cp), prev = static_cast<int>((r + cp - 1) % cp);
    DeviceBuffer ring = gpu::upload_vector(Ints{r}, s), ring_in(8);
    comm.send_recv({ring.get(), ring.bytes()}, 1, next, {ring_in.get(), ring_in.bytes()}, 1, prev,
                   DType::i64, 0);
    EXPECT_EQ(gpu::download_vector<std::int64_t>(ring_in, 1, s)[0], prev);
    comm.barrier();
  });
}

TEST_F(NcclComm, bootstraps_over_a_host_comm) {
  sim::World host(1);
  host.run([&](sim::RankContext& ctx) {
    gpu::DeviceComm& comm = gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::nccl);
    EXPECT_EQ(comm.name(), "nccl");
    EXPECT_EQ(comm.size(), 1);
    EXPECT_EQ(&comm, &gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::nccl));
  });
}

TEST_F(NcclComm, more_ranks_than_devices_is_an_error_naming_both) {
  const int cp = gpu::device_count() + 1;
  sim::World host(cp);
  std::string message;
  try {
    host.run(
        [&](sim::RankContext& ctx) { gpu::device_comm_for(ctx.comm, gpu::GpuCommKind::nccl); });
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("cp=" + std::to_string(cp) + " but " + std::to_string(cp - 1) +
                         " visible devices"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace cplab::gputest
