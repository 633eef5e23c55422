#include "properties/mutant_hunt.hpp"

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "properties/rank_processes.hpp"
#include "properties/runner.hpp"

namespace cplab::properties {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

MutantVerdict hunt_mutant(const ImplementationInfo& mutant, const HuntOptions& options) {
  MutantVerdict verdict;
  verdict.mutant = mutant.name;
  verdict.bug = mutant.summary;
  const auto start = std::chrono::steady_clock::now();
  std::vector<const LayoutEntry*> layouts;
  for (const LayoutEntry& entry : layout_table()) {
    if (mutant.layouts.empty() || std::find(mutant.layouts.begin(), mutant.layouts.end(),
                                            entry.name) != mutant.layouts.end()) {
      layouts.push_back(&entry);
    }
  }
  // The properties that check the mutant's bug first (as a developer runs the relevant test
  // first), then the rest in table order.
  std::vector<const PropertyInfo*> properties;
  for (const std::string& name : mutant.checked_first_by)
    properties.push_back(&find_property(name));
  for (const PropertyInfo& property : property_table()) {
    if (std::find(properties.begin(), properties.end(), &property) == properties.end())
      properties.push_back(&property);
  }
  // Two rounds: a quick look at every job, then the rest of each job's budget with fresh cases.
  // Most bugs die in the first round (a mutant costs seconds, not a full pass over the suite),
  // and every job still sees `cases` cases in all.
  const std::int64_t quick = std::min<std::int64_t>(kQuickHuntCases, options.cases);
  const std::int64_t rounds[] = {quick, options.cases - quick};
  RunOptions run;
  for (std::uint64_t round = 0; round < 2; ++round) {
    run.cases = rounds[round];
    if (run.cases == 0) continue;
    for (const PropertyInfo* property : properties) {
      for (const LayoutEntry* layout : layouts) {
        const JobSpec job{property, layout, &mutant};
        run.seed = job_seed(options.seed, job) + round;
        const double before = seconds_since(start);
        const JobResult result = run_job(job, run);
        verdict.cases += result.cases;
        ++verdict.jobs;
        if (result.status != JobStatus::failed) continue;
        verdict.killed = true;
        verdict.property = result.property;
        verdict.layout = result.layout;
        verdict.counterexample = result.counterexample;
        verdict.message = result.message;
        verdict.replay = result.replay;
        verdict.shrinks = result.shrinks;
        verdict.shrinks_tried = result.shrinks_tried;
        verdict.job_cases = result.cases;
        verdict.seconds = seconds_since(start);
        verdict.seconds_to_failure = before + result.seconds_to_failure;
        verdict.shrink_seconds = result.seconds - result.seconds_to_failure;
        return verdict;
      }
    }
  }
  verdict.seconds = seconds_since(start);
  return verdict;
}

std::vector<MutantVerdict> hunt_mutants(const HuntOptions& options, const HuntProgress& progress) {
  std::vector<const ImplementationInfo*> mutants;
  if (options.only.empty()) {
    for (const ImplementationInfo& info : implementation_registry()) {
      if (info.mutant) mutants.push_back(&info);
    }
  } else {
    for (const std::string& name : options.only) {
      const ImplementationInfo& info = find_implementation(name);
      CPLAB_CHECK(info.mutant, "'{}' is not a mutant", name);
      mutants.push_back(&info);
    }
  }
  if (options.processes) {
    for (const ImplementationInfo*& mutant : mutants)
      mutant = &find_implementation(mutant->name + kProcessSuffix);
  }
  std::vector<MutantVerdict> verdicts;
  for (const ImplementationInfo* mutant : mutants) {
    verdicts.push_back(hunt_mutant(*mutant, options));
    if (progress)
      progress(verdicts.back(), static_cast<std::int64_t>(verdicts.size()),
               static_cast<std::int64_t>(mutants.size()));
  }
  return verdicts;
}

}  // namespace cplab::properties
