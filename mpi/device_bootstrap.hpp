#pragma once
// The part of bootstrapping NCCL over MPI that needs no GPU: where each process of the job sits
// (its node-local rank, from the host names every process reports) and which device it drives,
// then rank 0's unique id handed to every process. gpu/comm/nccl_mpi.cpp feeds it the device
// count and ncclGetUniqueId; the tests feed it stand-ins and run it for real under mpirun.
//
// Bounded and all-or-none: a process that fails in here (too few devices on its node, no id) makes
// every process throw its message, within the timeout, instead of leaving the others waiting in
// ncclCommInitRank.
#include <chrono>
#include <functional>
#include <string>

namespace cplab::mpi {

struct DevicePlacement {
  int rank = 0, size = 1;              // in the job
  int local_rank = 0, local_size = 1;  // among the processes on this node
  int device = 0;                      // = local_rank
  std::string host;
};

struct DeviceBootstrap {
  DevicePlacement placement;
  std::string id;  // rank 0's make_id(), the same on every process
};

// Collective over the whole job. visible_devices() on every process, make_id() on rank 0 only;
// either may throw.
DeviceBootstrap bootstrap_devices(const std::function<int()>& visible_devices,
                                  const std::function<std::string()>& make_id,
                                  std::chrono::milliseconds timeout);

}  // namespace cplab::mpi
