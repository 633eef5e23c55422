#include "properties/sweep_processes.hpp"

#include "core/error.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/rank_processes.hpp"

namespace cplab::properties {
namespace {

bool any_rank_processes(const SweepOptions& options) {
  for (const std::string& name : options.impls) {
    if (find_implementation(name).ranks_as_processes) return true;
  }
  return false;
}

}  // namespace

SweepProcesses plan_sweep_processes(const SweepOptions& options, bool distribute,
                                    std::int64_t rank_timeout_ms) {
  SweepProcesses out;
  out.distribute = distribute;
  if (rank_timeout_ms > 0) set_rank_process_timeout_ms(rank_timeout_ms);
  const bool case_mode = any_rank_processes(options);
  const int launched = launcher_processes();
  RankProcesses* processes = mpi_rank_processes();
  if (case_mode) {
    CPLAB_CHECK(!distribute,
                "--distribute splits the jobs over the processes, while an -mpi implementation "
                "runs every case across them: choose one");
    CPLAB_CHECK(options.time_budget_seconds <= 0.0,
                "--time-budget cannot be used with an -mpi implementation (every process must run "
                "the same jobs)");
    if (processes == nullptr) return out;  // the jobs are reported skipped, with the reason
    out.rank = processes->world_rank();
    out.size = processes->world_size();
    cps_for_processes(options.cps);  // a C above the job's processes: refused now
    return out;
  }
  if (distribute) {
    CPLAB_CHECK(processes != nullptr, "--distribute needs a build with MPI (CPLAB_MPI)");
    CPLAB_CHECK(options.shard.count == 1,
                "--distribute splits the whole job list over the processes; it does not combine "
                "with --shard");
    out.rank = processes->world_rank();
    out.size = processes->world_size();
    return out;
  }
  CPLAB_CHECK(launched <= 1,
              "this sweep is one of {} processes started by a launcher: pass --distribute to split "
              "its jobs over them, or --impl sim-mpi (or <mutant>-mpi) to run every case across "
              "them",
              launched);
  return out;
}

}  // namespace cplab::properties
