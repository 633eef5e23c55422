#pragma once
// Where the C ranks of a property's computation run: threads of this process (ThreadComm, the
// default) or the processes of an MPI job (implementations whose name ends in "-mpi": sim-mpi and
// the mutants' process variants). A job or replay of such an implementation holds a
// ScopedRankProcesses; on_ranks (harness.hpp) then runs this process's rank and exchanges results.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace cplab::properties {

class RankProcesses {
 public:
  virtual ~RankProcesses() = default;
  // How many processes the job has: cases need C <= this.
  virtual int world_size() = 0;
  virtual int world_rank() = 0;
  // fn on this process's rank (when below cp); every rank's bytes, by rank, on every process.
  virtual std::vector<std::string> run(
      std::int64_t cp, const std::function<std::string(Comm&, std::int64_t)>& fn) = 0;
  // Every process's `mine`, by rank, within timeout_ms (a distributed sweep's reports).
  virtual std::vector<std::string> exchange_all(const std::string& mine,
                                                std::int64_t timeout_ms) = 0;
};

// The MPI job's processes, or nullptr when the build has no MPI.
RankProcesses* mpi_rank_processes();

// Processes a launcher (mpirun, srun) started for this job, read from its environment; 1 without
// one, or in a build without MPI.
int launcher_processes();

// How long a rank process waits for the others (default: the threads' collective timeout).
std::int64_t rank_process_timeout_ms();
void set_rank_process_timeout_ms(std::int64_t ms);

// The active one for this thread (nullptr: ranks are threads).
RankProcesses* active_rank_processes();

class ScopedRankProcesses {
 public:
  explicit ScopedRankProcesses(RankProcesses* processes);
  ~ScopedRankProcesses();
  ScopedRankProcesses(const ScopedRankProcesses&) = delete;
  ScopedRankProcesses& operator=(const ScopedRankProcesses&) = delete;

 private:
  RankProcesses* saved_;
};

// The suffix that runs an implementation's ranks as processes: "sim" → "sim-mpi".
inline constexpr const char* kProcessSuffix = "-mpi";

}  // namespace cplab::properties
