// Merging the reports of one sweep split with --shard i/n over several machines, and writing the
// three report files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "reference/types/error.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {

using properties::SweepReport;

SweepReport merge(const std::vector<SweepReport>& shards) {
  CPLAB_CHECK(!shards.empty(), "merge: no reports given");
  SweepReport merged = shards.front();
  merged.shards.clear();
  merged.results.clear();
  merged.seconds = 0.0;
  std::set<std::int64_t> shard_indices, jobs;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const SweepReport& s = shards[i];
    // Reports of different sweeps must not be mixed: their job lists and seeds differ.
    CPLAB_CHECK(
        s.seed == merged.seed && s.cases_per_job == merged.cases_per_job,
        "merge: report {} is of another sweep (seed {} cases {}; report 0 has seed {} cases {})", i,
        s.seed, s.cases_per_job, merged.seed, merged.cases_per_job);
    CPLAB_CHECK(s.layouts == merged.layouts && s.cps == merged.cps && s.impls == merged.impls &&
                    s.properties == merged.properties,
                "merge: report {} selects other layouts, cp, impls or properties than report 0", i);
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
  }
  std::sort(merged.shards.begin(), merged.shards.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  std::sort(merged.results.begin(), merged.results.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  return merged;
}

std::vector<std::filesystem::path> write_all(const SweepReport& report,
                                             const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"report.json", to_json(report)},
      {"junit.xml", to_junit(report)},
      {"summary.md", to_markdown(report)},
      {"index.html", to_html(report)}};
  std::vector<std::filesystem::path> written;
  for (const auto& [name, text] : files) {
    const std::filesystem::path path = dir / name;
    std::ofstream out(path);
    out << text;
    CPLAB_CHECK(out.good(), "cannot write {}", path.string());
    written.push_back(path);
  }
  return written;
}

}  // namespace cplab::reports
