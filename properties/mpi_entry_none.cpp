// Builds without MPI: no rank processes (the -mpi implementations are skipped, saying why).
#include "properties/rank_processes.hpp"

namespace cplab::properties {

RankProcesses* mpi_rank_processes() { return nullptr; }
int launcher_processes() { return 1; }

}  // namespace cplab::properties
