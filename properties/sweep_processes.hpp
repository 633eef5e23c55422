#pragma once
// How `cplab sweep` uses the processes of an MPI job (mpirun -np N, srun -n N). Two uses that do
// not mix, so the command line says which:
//   - an implementation whose ranks are processes (sim-mpi, <mutant>-mpi): every process runs
//     every job together, each case's C ranks being processes 0..C-1 (C <= N);
//   - --distribute: the N processes split the job list (process p runs shard p/N on its own,
//     its ranks as threads) and rank 0 merges their reports into one, equal to a single-process
//     sweep's with the same seed (timings aside).
// Only rank 0 prints and writes reports (reports/distributed_sweep.hpp merges the others'). Started
// as one of N > 1 processes with neither, the sweep refuses to run (N copies of one sweep would
// write the same files).
#include <cstdint>

#include "properties/sweep.hpp"

namespace cplab::properties {

struct SweepProcesses {
  bool distribute = false;
  int rank = 0, size = 1;
  bool writes_reports() const { return rank == 0; }
};

// Checks the combination (throws cplab::Error, a usage error) and starts MPI where needed.
SweepProcesses plan_sweep_processes(const SweepOptions& options, bool distribute,
                                    std::int64_t rank_timeout_ms);

}  // namespace cplab::properties
