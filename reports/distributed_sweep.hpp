#pragma once
// `cplab sweep --distribute`: the N processes of an MPI job split the job list, and every
// process's report is merged into one, equal to a single-process sweep's with the same seed
// (timings aside). Here rather than in properties/ because the reports travel between the
// processes as report.json text (this folder's writer and reader).
#include "properties/sweep.hpp"
#include "properties/sweep_processes.hpp"

namespace cplab::reports {

// This process's shard of the jobs, then every process's report merged (on every process).
properties::SweepReport run_distributed_sweep(const properties::SweepOptions& options,
                                              const properties::SweepProcesses& processes,
                                              const properties::SweepProgress& progress);

}  // namespace cplab::reports
