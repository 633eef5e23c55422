#include "reports/distributed_sweep.hpp"

#include <chrono>

#include "properties/rank_processes.hpp"
#include "properties/runner.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {
namespace {

// A process of a distributed sweep waits this long for the slowest one's report.
constexpr std::int64_t kReportWaitMs = 12LL * 3600 * 1000;

}  // namespace

properties::SweepReport run_distributed_sweep(const properties::SweepOptions& options,
                                              const properties::SweepProcesses& processes,
                                              const properties::SweepProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  properties::SweepOptions mine = options;
  mine.shard = {processes.rank, processes.size};
  const properties::SweepReport own = properties::run_sweep(mine, progress);
  const std::vector<std::string> texts =
      properties::mpi_rank_processes()->exchange_all(to_json(own), kReportWaitMs);
  std::vector<properties::SweepReport> shards;
  for (const std::string& text : texts) shards.push_back(from_json(text));
  properties::SweepReport merged = merge(shards);
  // One sweep, not N shards of one: the report reads as the single-process sweep's would.
  merged.shards = {options.shard};
  merged.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return merged;
}

}  // namespace cplab::reports
