// Merging the reports of one sweep split with --shard i/n over several machines (the files are
// written by write_reports.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {

using properties::SweepReport;

namespace {

// What a report must hold whatever its origin: shards that split one job list, results of those
// shards' jobs with counts that add up. A hand-edited or truncated report is refused here.
void check_structure(const SweepReport& s, std::size_t i) {
  CPLAB_CHECK(!s.shards.empty(), "merge: report {} lists no shard", i);
  for (const auto& shard : s.shards) {
    CPLAB_CHECK(shard.count >= 1 && shard.index >= 0 && shard.index < shard.count,
                "merge: report {} has shard {}/{}, not 0 <= i < n", i, shard.index, shard.count);
  }
  CPLAB_CHECK(s.cases_per_job >= 1, "merge: report {} has cases_per_job {}", i, s.cases_per_job);
  for (const auto& r : s.results) {
    const bool in_shards = std::any_of(s.shards.begin(), s.shards.end(), [&](const auto& shard) {
      return r.job >= 0 && r.job % shard.count == shard.index;
    });
    CPLAB_CHECK(in_shards,
                "merge: report {} holds job {} ({} {} {}), which none of its shards runs", i, r.job,
                r.property, r.layout, r.impl);
    const bool counts_ok =
        r.cases >= 0 && r.passed >= 0 && (r.failed == 0 || r.failed == 1) && r.shrinks >= 0 &&
        r.passed + r.failed == r.cases && r.cases <= s.cases_per_job &&
        (r.status == properties::JobStatus::failed) == (r.failed == 1) &&
        (r.status != properties::JobStatus::passed || r.cases == s.cases_per_job);
    CPLAB_CHECK(counts_ok,
                "merge: report {} job {} has inconsistent counts (status {}, cases {}, passed {}, "
                "failed {}, shrinks {}, cases_per_job {})",
                i, r.job, properties::job_status_name(r.status), r.cases, r.passed, r.failed,
                r.shrinks, s.cases_per_job);
  }
}

}  // namespace

SweepReport merge(const std::vector<SweepReport>& shards) {
  CPLAB_CHECK(!shards.empty(), "merge: no reports given");
  for (std::size_t i = 0; i < shards.size(); ++i) check_structure(shards[i], i);
  SweepReport merged = shards.front();
  merged.shards.clear();
  merged.results.clear();
  merged.seconds = 0.0;
  merged.complete = true;
  std::set<std::int64_t> shard_indices, jobs;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const SweepReport& s = shards[i];
    // Reports of different sweeps must not be mixed: their job lists and seeds differ.
    CPLAB_CHECK(
        s.seed == merged.seed && s.cases_per_job == merged.cases_per_job,
        "merge: report {} is of another sweep (seed {} cases {}; report 0 has seed {} cases {})", i,
        s.seed, s.cases_per_job, merged.seed, merged.cases_per_job);
    CPLAB_CHECK(s.layouts == merged.layouts && s.cps == merged.cps && s.impls == merged.impls &&
                    s.properties == merged.properties && s.masks == merged.masks,
                "merge: report {} selects other layouts, cp, impls, properties or masks than "
                "report 0",
                i);
    for (const auto& shard : s.shards) {
      CPLAB_CHECK(shard.count == shards.front().shards.front().count,
                  "merge: report {} is shard {}/{}, report 0 splits into {}", i, shard.index,
                  shard.count, shards.front().shards.front().count);
      CPLAB_CHECK(shard_indices.insert(shard.index).second, "merge: shard {}/{} given twice",
                  shard.index, shard.count);
      merged.shards.push_back(shard);
    }
    for (const auto& r : s.results) {
      CPLAB_CHECK(jobs.insert(r.job).second, "merge: job {} ({} {} {}) appears in two reports",
                  r.job, r.property, r.layout, r.impl);
      merged.results.push_back(r);
    }
    merged.seconds += s.seconds;
    merged.complete = merged.complete && s.complete;
  }
  std::sort(merged.shards.begin(), merged.shards.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  std::sort(merged.results.begin(), merged.results.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  return merged;
}

}  // namespace cplab::reports
