// A sweep report read back from disk is untrusted: --merge recomputes the job list its selection
// and seed define and refuses results that do not match it.
#include <fmt/format.h>

#include <charconv>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "properties/sweep.hpp"

namespace cplab::properties {

void check_report_jobs(const SweepReport& report) {
  SweepOptions options;
  options.seed = report.seed;
  options.layouts = report.layouts;
  options.properties = report.properties;
  options.impls = report.impls;
  const std::vector<Job> jobs = all_jobs(options);
  std::map<std::int64_t, const Job*> by_index;
  for (const Job& job : jobs) by_index[job.index] = &job;
  for (const JobResult& r : report.results) {
    const auto it = by_index.find(r.job);
    CPLAB_CHECK(it != by_index.end(), "result for job {} ({} {} {}): the selection has {} jobs",
                r.job, r.property, r.layout, r.impl, jobs.size());
    const JobSpec& spec = it->second->spec;
    // The job's three names as one tuple: a job's identity, not a switch on any layout.
    const auto named = std::tie(r.property, r.layout, r.impl);
    const auto defined = std::tie(spec.property->name, spec.layout->name, spec.impl->name);
    CPLAB_CHECK(named == defined,
                "result for job {} names {} {} {}; job {} of this selection is {} {} {}", r.job,
                r.property, r.layout, r.impl, r.job, spec.property->name, spec.layout->name,
                spec.impl->name);
    CPLAB_CHECK(r.seed == job_seed(report.seed, spec),
                "result for job {} ({} {} {}) has seed {}; sweep seed {} gives it {}", r.job,
                r.property, r.layout, r.impl, r.seed, report.seed, job_seed(report.seed, spec));
  }
}

}  // namespace cplab::properties
