#pragma once
// cplab's own MPI communicator (set up by transport.hpp's start_channel and await_channel, in
// channel.cpp) and the polling every wait of the transport shares. Included only by mpi/'s own
// sources: it includes mpi.h, which no public header of mpi/ does.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <string>
#include <vector>

namespace cplab::mpi::detail {

// Our own copy of the world's group, so no message of cplab's meets anyone else's; the first call
// finishes its setup (await_channel).
MPI_Comm channel();

// Polling: yield first (the peer may be about to send), then sleep briefly so that waiting ranks
// leave the cores to the ranks that compute (processes may outnumber cores).
void pause(int round);

std::string mpi_error_text(int code);
std::string ranks_text(const std::vector<int>& ranks);  // "1, 3", or "none"

}  // namespace cplab::mpi::detail
