#pragma once
// The mutant hunt: the property suite run against every mutant, to prove the checks have teeth.
// Properties run on the layouts whose code carries the mutant's bug, those the mutant names as
// checking it first (ImplementationInfo::checked_first_by), then the rest in table order; the first
// failing job kills the mutant (its shrunk counterexample is the evidence). A mutant that
// survives the whole budget is a hole in the suite.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "properties/implementation_registry.hpp"

namespace cplab::properties {

// Cases per job of the hunt: every mutant dies well within it (a test asserts it).
inline constexpr std::int64_t kDefaultHuntCases = 100;
// Cases per job of the hunt's first, quick round over every job.
inline constexpr std::int64_t kQuickHuntCases = 10;
// Time to kill: every mutant is killed within this many cases, counted over its whole hunt (a
// test asserts it for the hunt's fixed seed), and within kTimeToKillSeconds on a 2-core machine
// (reported, not tested: seconds depend on the machine).
inline constexpr std::int64_t kTimeToKillCases = 100;
inline constexpr double kTimeToKillSeconds = 30.0;

struct HuntOptions {
  std::int64_t cases = kDefaultHuntCases;
  std::uint64_t seed = 0;
  std::vector<std::string> only;  // mutant names; empty: all
  bool processes = false;         // hunt each mutant's -mpi variant (its ranks as MPI processes)
};

struct MutantVerdict {
  std::string mutant;
  std::string bug;
  bool killed = false;
  std::string property, layout;  // the killing job
  std::string counterexample, message, replay;
  std::int64_t cases = 0;  // cases run until the first failure (or in all, when it survived)
  std::int64_t shrinks = 0;
  double seconds = 0.0;  // the whole hunt of this mutant, shrinking included
  // Time to kill in detail: jobs run (the killing one included), the killing job's own cases up
  // to its first failure, the shrunk cases tried, and the seconds to the first failure and of the
  // shrinking after it.
  std::int64_t jobs = 0;
  std::int64_t job_cases = 0;
  std::int64_t shrinks_tried = 0;
  double seconds_to_failure = 0.0;
  double shrink_seconds = 0.0;
};

using HuntProgress =
    std::function<void(const MutantVerdict& verdict, std::int64_t done, std::int64_t total)>;

MutantVerdict hunt_mutant(const ImplementationInfo& mutant, const HuntOptions& options);
std::vector<MutantVerdict> hunt_mutants(const HuntOptions& options,
                                        const HuntProgress& progress = nullptr);

}  // namespace cplab::properties
