// The NCCL bootstrap's MPI half under mpirun -np 3, with stand-ins for the device count and the
// unique id: placement and id reach every process, and a failure on any process before
// ncclCommInitRank fails every process with its message (never leaves one waiting).
#include "mpi/device_bootstrap.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/error.hpp"
#include "mpi/session.hpp"

namespace cplab::mpi {
namespace {

using std::chrono::milliseconds;

std::string error_of(const std::function<int()>& devices, const std::function<std::string()>& id) {
  try {
    bootstrap_devices(devices, id, milliseconds(20000));
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(DeviceBootstrap, EveryProcessGetsItsDeviceAndRankZerosId) {
  ASSERT_EQ(world().size, 3) << "run under mpirun -np 3";
  const DeviceBootstrap boot = bootstrap_devices(
      [] { return 4; },
      [] { return std::string("id made by rank ") + std::to_string(world().rank); },
      milliseconds(20000));
  EXPECT_EQ(boot.id, "id made by rank 0");
  EXPECT_EQ(boot.placement.rank, world().rank);
  EXPECT_EQ(boot.placement.size, 3);
  // One node: the node-local rank is the rank, and it picks the device.
  EXPECT_EQ(boot.placement.local_size, 3);
  EXPECT_EQ(boot.placement.local_rank, world().rank);
  EXPECT_EQ(boot.placement.device, world().rank);
}

TEST(DeviceBootstrap, TooFewDevicesFailEveryProcess) {
  const std::string error = error_of([] { return 2; }, [] { return std::string("id"); });
  EXPECT_NE(error.find("rank 0 failed before ncclCommInitRank"), std::string::npos) << error;
  EXPECT_NE(error.find("3 ranks on"), std::string::npos) << error;
  EXPECT_NE(error.find("but 2 visible GPUs"), std::string::npos) << error;
}

TEST(DeviceBootstrap, OneProcessWithoutADeviceFailsEveryProcessWithItsMessage) {
  const std::string error = error_of(
      [] {
        CPLAB_CHECK(world().rank != 2, "cudaGetDeviceCount: no CUDA-capable device");
        return 4;
      },
      [] { return std::string("id"); });
  EXPECT_NE(error.find("rank 2 failed before ncclCommInitRank"), std::string::npos) << error;
  EXPECT_NE(error.find("no CUDA-capable device"), std::string::npos) << error;
}

TEST(DeviceBootstrap, NoUniqueIdFailsEveryProcess) {
  const std::string error =
      error_of([] { return 4; },
               []() -> std::string { CPLAB_FAIL("ncclGetUniqueId: unhandled system error"); });
  EXPECT_NE(error.find("rank 0 failed before ncclCommInitRank"), std::string::npos) << error;
  EXPECT_NE(error.find("ncclGetUniqueId"), std::string::npos) << error;
}

}  // namespace
}  // namespace cplab::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  cplab::mpi::finish();
  return status;
}
