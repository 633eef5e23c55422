#include "gpu/comm/nccl_mpi.hpp"

#include <cstring>

#include "core/error.hpp"
#include "gpu/device.hpp"
#include "mpi/device_bootstrap.hpp"

namespace cplab::gpu {

std::unique_ptr<NcclComm> nccl_comm_over_mpi(std::chrono::milliseconds timeout) {
  // Placement and the unique id go through the bounded, all-or-none bootstrap: a process that
  // cannot take part fails every process with its message before any enters ncclCommInitRank.
  const mpi::DeviceBootstrap boot =
      mpi::bootstrap_devices([] { return device_count(); },
                             [] {
                               const NcclId id = nccl_unique_id();
                               return std::string(id.data(), id.size());
                             },
                             timeout);
  NcclId id{};
  CPLAB_CHECK(boot.id.size() == id.size(), "nccl over MPI: the unique id has {} bytes, not {}",
              boot.id.size(), id.size());
  std::memcpy(id.data(), boot.id.data(), id.size());
  return NcclComm::init_rank(id, boot.placement.size, boot.placement.rank, boot.placement.device,
                             timeout);
}

}  // namespace cplab::gpu
