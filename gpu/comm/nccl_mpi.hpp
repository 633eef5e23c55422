#pragma once
// One process per GPU across nodes: this process's NCCL rank, bootstrapped over the MPI job
// (mpi/device_bootstrap.hpp: every process reports its host, rank 0 makes the unique id, every
// rank joins on the GPU of its node-local rank; a process that fails before ncclCommInitRank fails
// them all with its message). Built only where CMake finds MPI (CPLAB_HAVE_MPI); MPI starts on
// first use. Run as `mpirun -np N cplab ...`.
#include <chrono>
#include <memory>

#include "gpu/comm/nccl_comm.hpp"

namespace cplab::gpu {

std::unique_ptr<NcclComm> nccl_comm_over_mpi(
    std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));

}  // namespace cplab::gpu
