#include "gpu/comm/nccl_mpi.hpp"

// Only the C API: the deprecated C++ bindings some MPIs pull in by default do not build
// warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "reference/types/error.hpp"

namespace cplab::gpu {
namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  CPLAB_FAIL("{} failed: {}", call, std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

std::unique_ptr<NcclComm> nccl_comm_over_mpi(std::chrono::milliseconds timeout) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  CPLAB_CHECK(initialized != 0, "nccl over MPI: call MPI_Init first");
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  // The node-local rank picks the GPU: ranks that share a node share its memory domain.
  MPI_Comm node;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int local_rank = 0, local_size = 0;
  check_mpi(MPI_Comm_rank(node, &local_rank), "MPI_Comm_rank(node)");
  check_mpi(MPI_Comm_size(node, &local_size), "MPI_Comm_size(node)");
  MPI_Comm_free(&node);
  const int devices = device_count();
  CPLAB_CHECK(local_size <= devices, "nccl over MPI: {} ranks on this node but {} visible GPUs",
              local_size, devices);
  NcclId id{};
  if (rank == 0) id = nccl_unique_id();
  check_mpi(MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD),
            "MPI_Bcast");
  return NcclComm::init_rank(id, size, rank, local_rank, timeout);
}

}  // namespace cplab::gpu
