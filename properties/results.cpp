#include "properties/results.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace cplab::properties {

const char* job_status_name(JobStatus s) {
  switch (s) {
    case JobStatus::passed:
      return "passed";
    case JobStatus::failed:
      return "failed";
    case JobStatus::skipped:
      return "skipped";
  }
  return "?";
}

JobStatus parse_job_status(const std::string& name) {
  for (JobStatus s : {JobStatus::passed, JobStatus::failed, JobStatus::skipped}) {
    if (name == job_status_name(s)) return s;
  }
  CPLAB_FAIL("unknown job status '{}'; expected passed, failed or skipped", name);
}

std::int64_t JobResult::missing_combinations() const {
  return static_cast<std::int64_t>(std::count_if(combinations.begin(), combinations.end(),
                                                 [](const auto& kv) { return kv.second == 0; }));
}

std::int64_t SweepReport::total_cases() const {
  return std::accumulate(results.begin(), results.end(), std::int64_t{0},
                         [](std::int64_t sum, const JobResult& r) { return sum + r.cases; });
}

std::int64_t SweepReport::count(JobStatus status) const {
  return static_cast<std::int64_t>(std::count_if(
      results.begin(), results.end(), [&](const JobResult& r) { return r.status == status; }));
}

double SweepReport::cases_per_second() const {
  return seconds > 0.0 ? static_cast<double>(total_cases()) / seconds : 0.0;
}

std::vector<PropertyTime> SweepReport::property_times() const {
  std::map<std::string, PropertyTime> by_name;
  double total = 0.0;
  for (const JobResult& r : results) {
    PropertyTime& t = by_name[r.property];
    t.property = r.property;
    ++t.jobs;
    t.cases += r.cases;
    t.seconds += r.seconds;
    total += r.seconds;
  }
  std::vector<PropertyTime> times;
  for (auto& [name, t] : by_name) {
    t.cases_per_second = t.seconds > 0.0 ? static_cast<double>(t.cases) / t.seconds : 0.0;
    t.share = total > 0.0 ? t.seconds / total : 0.0;
    times.push_back(t);
  }
  std::stable_sort(times.begin(), times.end(), [](const PropertyTime& a, const PropertyTime& b) {
    return a.seconds > b.seconds;
  });
  return times;
}

}  // namespace cplab::properties
