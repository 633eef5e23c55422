#pragma once
// Running one property on one layout and implementation under RapidCheck (a "job"), and running
// one case outside it (replay). A job draws cases from the layout's generator, stops at the first
// failing one, shrinks it, and reports the shrunk case in its one-line form with the command that
// replays it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "properties/case.hpp"
#include "properties/generators.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/layout_table.hpp"
#include "properties/property.hpp"
#include "properties/rank_processes.hpp"
#include "properties/results.hpp"

namespace cplab::properties {

struct JobSpec {
  const PropertyInfo* property = nullptr;
  const LayoutEntry* layout = nullptr;
  const ImplementationInfo* impl = nullptr;
};

// Why a job may stop before its cases are done; checked before every case, shrinks included.
// Returns "" to go on, else the reason ("time budget of 5 s spent", "interrupted by SIGINT").
using StopCheck = std::function<std::string()>;

struct RunOptions {
  std::int64_t cases = 100;  // RapidCheck's max_success, in [1, limits::kMaxCasesPerJob]
  std::uint64_t seed = 0;    // the job's own seed (derive it with job_seed)
  GenOptions gen;
  StopCheck stop;  // null: run every case
};

// A job's seed: a pure function of the sweep seed and the job's names, so that a job draws the
// same cases in a full sweep, in any shard of it, or alone.
std::uint64_t job_seed(std::uint64_t sweep_seed, const JobSpec& job);

// The C values a job whose ranks are processes draws from: `asked`, each at most the MPI job's
// processes (else throws), or 1..processes when none were asked for.
std::vector<std::int64_t> cps_for_processes(const std::vector<std::int64_t>& asked);

// Runs the job. An implementation that is unavailable here gives `skipped` with its reason; a job
// that options.stop cuts before its cases are done is `skipped` with the cut and the cases that
// held (a failure found before the cut stays a failure, shrunk as far as the cut allowed). Running
// out of memory or threads is rethrown (cplab::ResourceError), never reported as a failure.
JobResult run_job(const JobSpec& job, const RunOptions& options);

// `cplab replay --impl sim --property NAME '<case>'`, quoted for a POSIX shell; for an -mpi
// implementation, under `mpirun -np C`.
std::string replay_command(const std::string& impl, const std::string& property, const Case& c);

// One property on one case, outside RapidCheck: "" when it holds, else the failure (errors the
// implementation throws are failures too, with their message).
struct CaseOutcome {
  std::string property;
  std::string failure;
  CheckNotes notes;
  double seconds = 0.0;
};
CaseOutcome run_case(const PropertyInfo& property, const Case& c, Implementation& impl);

}  // namespace cplab::properties
