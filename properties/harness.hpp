#pragma once
// What every property does around its comparison: build the case's batch and the reference plan,
// run the implementation under test on C ThreadComm ranks, and hand the reference's view of one
// rank (its ShardLayout) to the verbs that take one.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/shard_plan.hpp"
#include "implementation/implementation.hpp"
#include "properties/case.hpp"
#include "properties/rank_processes.hpp"
#include "properties/rank_results.hpp"

namespace cplab::properties {

// A collective that never completes is a failure of the case, not a hang of the sweep.
inline constexpr std::int64_t kCollectiveTimeoutMs = 20000;

// Runs fn(comm, rank) on C ranks of a fresh World (or, under ScopedRankProcesses, on this
// process's rank of the MPI job); the first failure on any rank is rethrown (its
// message says which rank). The World's ranks are fibers under ScopedRankFibers, else threads.
void run_ranks(std::int64_t cp, const std::function<void(Comm&, std::int64_t)>& fn);

// While one lives on this thread, run_ranks runs the World's ranks as fibers on it: run_case
// makes one for an implementation whose ranks may share a thread (the CPU twin and its mutants).
class ScopedRankFibers {
 public:
  explicit ScopedRankFibers(bool fibers);
  ~ScopedRankFibers();
  ScopedRankFibers(const ScopedRankFibers&) = delete;
  ScopedRankFibers& operator=(const ScopedRankFibers&) = delete;

 private:
  bool saved_;
};

// The same, returning each rank's result, by rank.
template <typename Fn>
auto on_ranks(std::int64_t cp, Fn&& fn)
    -> std::vector<decltype(fn(std::declval<Comm&>(), std::int64_t{}))> {
  using Result = decltype(fn(std::declval<Comm&>(), std::int64_t{}));
  std::vector<Result> results(static_cast<std::size_t>(cp));
  if (RankProcesses* processes = active_rank_processes()) {
    // Ranks are processes: this one computes its rank, every process gets every rank's result.
    const std::vector<std::string> bytes = processes->run(
        cp, [&](Comm& comm, std::int64_t rank) { return wire::to_bytes(fn(comm, rank)); });
    for (std::int64_t r = 0; r < cp; ++r) {
      results[static_cast<std::size_t>(r)] =
          wire::from_bytes<Result>(bytes[static_cast<std::size_t>(r)]);
    }
    return results;
  }
  run_ranks(cp, [&](Comm& comm, std::int64_t rank) {
    results[static_cast<std::size_t>(rank)] = fn(comm, rank);
  });
  return results;
}

// The case's batch and the reference's plan of it (SPEC §3-§4), built once per case.
struct Subject {
  explicit Subject(const Case& c);
  const Case& c;
  Batch batch;
  ShardPlan plan;
  std::vector<ShardPlan> microbatches;  // reference::microbatch_plan(plan, m)
  std::int64_t rows_per_microbatch() const { return c.rows_per_microbatch(); }
  // Rows [m·per, (m+1)·per) of the batch, as a batch of their own.
  Batch microbatch_batch(std::int64_t m) const;
};

// impl.shard on this rank, each recorded layout checked (check_recorded_layout) before anything
// reads by it: a wrong map is the case's failure, naming the rank, row, entry and value.
std::vector<RankShard> checked_shard(Implementation& impl, Comm& comm, const LayoutSpec& spec,
                                     const Batch& batch);

// checked_shard on every rank: result[r][m].
std::vector<std::vector<RankShard>> shard_on_ranks(Implementation& impl, const LayoutSpec& spec,
                                                   const Batch& batch);

// The ShardLayout the reference says rank r records for a microbatch plan: what the verbs of the
// loss, attention and backward properties get, so that they test those verbs and not the partition.
ShardLayout reference_layout(const ShardPlan& microbatch, std::int64_t rank);

// "thd cp=3 dtype=f32 docs=5,3/8: " — what every failure message starts with.
std::string failure_prefix(const Case& c);

}  // namespace cplab::properties
