#include "cli/sweep_processes.hpp"

#include <chrono>
#include <cstdio>

#include "core/error.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/rank_processes.hpp"
#include "properties/runner.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::cli {
namespace {

// A process of a distributed sweep waits this long for the slowest one's report.
constexpr std::int64_t kReportWaitMs = 12LL * 3600 * 1000;

bool any_rank_processes(const properties::SweepOptions& options) {
  for (const std::string& name : options.impls) {
    if (properties::find_implementation(name).ranks_as_processes) return true;
  }
  return false;
}

}  // namespace

SweepProcesses plan_sweep_processes(const properties::SweepOptions& options, bool distribute,
                                    std::int64_t rank_timeout_ms) {
  SweepProcesses out;
  out.distribute = distribute;
  if (rank_timeout_ms > 0) properties::set_rank_process_timeout_ms(rank_timeout_ms);
  const bool case_mode = any_rank_processes(options);
  const int launched = properties::launcher_processes();
  properties::RankProcesses* processes = properties::mpi_rank_processes();
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
    properties::cps_for_processes(options.cps);  // a C above the job's processes: refused now
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

properties::SweepReport run_distributed_sweep(const properties::SweepOptions& options,
                                              const SweepProcesses& processes,
                                              const properties::SweepProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  properties::SweepOptions mine = options;
  mine.shard = {processes.rank, processes.size};
  const properties::SweepReport own = properties::run_sweep(mine, progress);
  const std::vector<std::string> texts =
      properties::mpi_rank_processes()->exchange_all(reports::to_json(own), kReportWaitMs);
  std::vector<properties::SweepReport> shards;
  for (const std::string& text : texts) shards.push_back(reports::from_json(text));
  properties::SweepReport merged = reports::merge(shards);
  // One sweep, not N shards of one: the report reads as the single-process sweep's would.
  merged.shards = {options.shard};
  merged.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return merged;
}

void silence_stdout() {
  std::fflush(stdout);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) std::fclose(stdout);
}

}  // namespace cplab::cli
