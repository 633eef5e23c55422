#pragma once
// The MPI side of one cplab process: MPI is initialised on first use (a process that never needs
// it never starts it), finalised at exit, and skipped at exit once the world is lost (a peer that
// is gone would make MPI_Finalize wait for it forever).
//
// Run as `mpirun -np N cplab ...` (or `srun`); without a launcher the process is a world of one.
#include <cstdint>
#include <string>

namespace cplab::mpi {

// Processes the launcher started, read from its environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or
// SLURM_NTASKS under a PMIx/PMI launch) without starting MPI; 1 when no launcher is seen.
int launcher_world_size();

struct World {
  int rank = 0;
  int size = 1;
};
// Starts MPI on first call (MPI_THREAD_FUNNELED: only the calling thread talks MPI).
World world();
bool started();

// After a peer is lost, the world cannot be used again: every later collective fails at once
// with `why`, and MPI_Finalize is skipped at exit.
void mark_lost(const std::string& why);
bool lost();
const std::string& lost_reason();

// What this rank is waiting for, printed if the launcher stops the process (SIGTERM) because
// another process of the job ended. Cheap: called around every wait.
void set_activity(const std::string& text);

// Finalises MPI when it was started and the world is intact; idempotent (main calls it; it also
// runs at exit).
void finish();

// Milliseconds on a steady clock: the deadlines of waits.
std::int64_t now_ms();

}  // namespace cplab::mpi
