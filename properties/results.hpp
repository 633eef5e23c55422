#pragma once
// What a sweep produces: one JobResult per (property, layout, implementation), and the sweep around
// them. reports/ writes these as JSON (schema in reports/README.md), JUnit XML and Markdown, and
// reads the JSON back to merge the reports of sharded sweeps.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cplab::properties {

enum class JobStatus : std::uint8_t {
  passed,   // every case held
  failed,   // a case failed; counterexample holds the shrunk one
  skipped,  // not run: implementation unavailable here, property not applicable, or time budget
};
const char* job_status_name(JobStatus s);
JobStatus parse_job_status(const std::string& name);

struct JobResult {
  std::int64_t job =
      0;  // index in the sweep's full (unsharded) job list: merges restore this order
  std::string property;
  std::string layout;
  std::string impl;
  JobStatus status = JobStatus::skipped;
  std::int64_t cases = 0;          // cases generated and run (the failing one included)
  std::int64_t passed = 0;         // cases that held
  std::int64_t failed = 0;         // 0 or 1: a job stops at its first failing case, then shrinks it
  std::int64_t shrinks = 0;        // shrink steps accepted on the way to the counterexample
  std::int64_t shrinks_tried = 0;  // shrunk cases run (accepted or not)
  double seconds_to_failure = 0.0;  // failed: from the job's start to its first failing case
  std::uint64_t seed = 0;           // the job's own RapidCheck seed (derived from the sweep seed)
  double seconds = 0.0;
  std::string counterexample;  // failed: the shrunk case, one line (cplab replay parses it)
  std::string message;         // failed: what went wrong on the shrunk case; skipped: why
  std::string replay;          // failed: the command that reruns the shrunk case verbosely
  std::map<std::string, std::int64_t> coverage;  // RC_TAG tags ("thd cp=odd packed") → cases
  // Every combination the property declares for this layout (coverage.hpp) → cases that drew it.
  std::map<std::string, std::int64_t> combinations;
  std::int64_t missing_combinations() const;  // declared, never drawn
};

struct ShardIndex {
  std::int64_t index = 0;  // 0-based
  std::int64_t count = 1;
};

// One property's part of a sweep: its jobs' cases and seconds (jobs run in parallel, so seconds is
// their sum, not wall time), its cases per second of job time, and its share of all jobs' seconds:
// the property that holds the sweep back is the one with the largest share.
struct PropertyTime {
  std::string property;
  std::int64_t jobs = 0, cases = 0;
  double seconds = 0.0;
  double cases_per_second = 0.0;
  double share = 0.0;  // of the summed job seconds, in [0, 1]
};

struct SweepReport {
  std::uint64_t seed = 0;
  std::int64_t cases_per_job = 0;
  std::vector<ShardIndex> shards;  // one for a single run; every merged shard after a merge
  // The selection ("all" when empty).
  std::vector<std::string> layouts, cps, impls, properties, masks;
  double time_budget_seconds = 0.0;  // 0: none
  double seconds = 0.0;              // wall time (merged: the sum over shards)
  std::vector<JobResult> results;    // in job order
  // False while the sweep runs and when it was interrupted: results then hold the jobs that
  // finished, and the jobs not listed never ran (merged: false when any shard's is).
  bool complete = true;

  std::int64_t total_cases() const;
  std::int64_t count(JobStatus status) const;
  double cases_per_second() const;
  // Every property that ran jobs, the largest share of the job time first (ties: by name).
  std::vector<PropertyTime> property_times() const;
  bool ok() const { return count(JobStatus::failed) == 0; }
};

}  // namespace cplab::properties
