#pragma once
// The sweep: every selected property × layout × implementation as a job, in one fixed order;
// `--shard i/n` takes every n-th job from the i-th, so n machines cover a sweep exactly once and
// their reports merge; a time budget leaves the jobs it did not reach `skipped`, never passed.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "properties/results.hpp"
#include "properties/runner.hpp"

namespace cplab::properties {

// Cases per job of the default sweep: sized so that the default sweep of sim (9 properties × 5
// layouts) finishes in a few minutes on 2 cores.
inline constexpr std::int64_t kDefaultCasesPerJob = 500;

struct SweepOptions {
  std::int64_t cases = kDefaultCasesPerJob;
  std::uint64_t seed = 0;
  std::vector<std::string> layouts;     // empty: every layout
  std::vector<std::string> properties;  // empty: every property
  std::vector<std::string> impls;       // empty: sim and gpu (in_default_sweep)
  std::vector<std::int64_t> cps;        // empty: C drawn from 1..64
  std::vector<std::string> masks;       // the masks drawn (mask_choice.hpp); empty: every family
  ShardIndex shard;
  double time_budget_seconds = 0.0;  // 0: none
  std::int64_t max_tokens = GenOptions{}.max_tokens;
};

struct Job {
  std::int64_t index = 0;  // in the full job list
  JobSpec spec;
};

// Every job of the selection in sweep order (property, then layout, then implementation); throws
// on unknown names (listing the known ones) and on a shard outside [0, n).
std::vector<Job> all_jobs(const SweepOptions& options);
std::vector<Job> shard_jobs(const std::vector<Job>& jobs, ShardIndex shard);
ShardIndex parse_shard(const std::string& text);  // "i/n", 0 <= i < n

// Called before each job (finished == nullptr) and after it.
using SweepProgress = std::function<void(const Job& job, std::int64_t done, std::int64_t total,
                                         const JobResult* finished)>;

// Called after every job with the report so far (complete = false), so that the caller can keep
// a valid report on disk while the sweep runs.
using SweepCheckpoint = std::function<void(const SweepReport& so_far)>;

// A time budget bounds the whole run: it is checked before every case (shrinks included), and
// the job it cuts is `skipped` with the cases that held. A stop request (request_sweep_stop, from
// a signal handler) cuts the running job the same way and starts no further job; the report then
// lists the jobs that ran and has complete = false.
SweepReport run_sweep(const SweepOptions& options, const SweepProgress& progress = nullptr,
                      const SweepCheckpoint& checkpoint = nullptr);

// run_sweep's loop over a job list of the caller's (its own shard of all_jobs, or jobs of an
// implementation held outside the registry, as tests do with theirs); `options` gives the cases,
// seed, C values, budget and the selection the report records.
SweepReport run_jobs(const SweepOptions& options, const std::vector<Job>& jobs,
                     const SweepProgress& progress = nullptr,
                     const SweepCheckpoint& checkpoint = nullptr);

// Async-signal-safe: records the signal (SIGINT, SIGTERM) that asked the running sweep to stop
// (0 clears the request).
void request_sweep_stop(int signal_number);
int sweep_stop_signal();  // 0 while no stop was requested

// Whether a sweep of these options must draw every declared combination (properties' coverage
// rules): one with the default cases per job or more, and rows as long as the default allows.
bool coverage_required(const SweepOptions& options);
// A passed job that left declared combinations undrawn fails, naming them.
void require_coverage(JobResult& result);

// The `cplab sweep` command that reruns exactly one job of a sweep (same seed, same cases).
std::string rerun_command(const SweepOptions& options, const JobResult& result);

}  // namespace cplab::properties

namespace cplab::properties {

// Checks a report (read back for --merge) against the sweep it claims to be: every result is a job
// of its selection and shards under this cplab's registries, with that job's names and seed.
// Throws naming the first result that is not.
void check_report_jobs(const SweepReport& report);

}  // namespace cplab::properties
