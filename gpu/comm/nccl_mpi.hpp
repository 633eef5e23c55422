#pragma once
// One process per GPU across nodes: this process's NCCL rank, bootstrapped over MPI_COMM_WORLD the
// way nccl-tests does (rank 0 makes the unique id, MPI_Bcast carries it, every rank joins on the
// GPU of its node-local rank). Built only where CMake finds MPI (CPLAB_HAVE_MPI); the caller has
// called MPI_Init. Run as `mpirun -np N cplab ...`.
#include <chrono>
#include <memory>

#include "gpu/comm/nccl_comm.hpp"

namespace cplab::gpu {

std::unique_ptr<NcclComm> nccl_comm_over_mpi(
    std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));

}  // namespace cplab::gpu
