#include "properties/harness.hpp"

#include <chrono>
#include <utility>

#include "comm/thread_comm.hpp"
#include "core/error.hpp"
#include "properties/case_data.hpp"
#include "reference/plan.hpp"

namespace cplab::properties {

namespace {
thread_local bool g_rank_fibers = false;
}  // namespace

ScopedRankFibers::ScopedRankFibers(bool fibers) : saved_(std::exchange(g_rank_fibers, fibers)) {}
ScopedRankFibers::~ScopedRankFibers() { g_rank_fibers = saved_; }

void run_ranks(std::int64_t cp, const std::function<void(Comm&, std::int64_t)>& fn) {
  if (RankProcesses* processes = active_rank_processes()) {
    processes->run(cp, [&](Comm& comm, std::int64_t rank) {
      fn(comm, rank);
      return std::string();
    });
    return;
  }
  sim::WorldOptions options;
  options.timeout = std::chrono::milliseconds(kCollectiveTimeoutMs);
  options.ranks_as_fibers = g_rank_fibers;
  sim::World world(static_cast<int>(cp), options);
  world.run([&](sim::RankContext& ctx) { fn(ctx.comm, ctx.rank); });
}

Subject::Subject(const Case& the_case) : c(the_case), batch(make_batch(the_case)) {
  // A case the reference refuses is a generator's or the reference's problem, not the
  // implementation's: say so, so that the failure is read right.
  try {
    plan = reference::plan(c.spec, batch);
  } catch (const Error& e) {
    CPLAB_FAIL("the reference refuses the case (generator or reference bug): {}", e.what());
  }
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m)
    microbatches.push_back(reference::microbatch_plan(plan, m));
}

Batch Subject::microbatch_batch(std::int64_t m) const {
  return make_batch_rows(c, m * rows_per_microbatch(), rows_per_microbatch());
}

std::vector<RankShard> checked_shard(Implementation& impl, Comm& comm, const LayoutSpec& spec,
                                     const Batch& batch) {
  std::vector<RankShard> shards = impl.shard(comm, spec, batch);
  // The layouts an implementation records are what every check below indexes by.
  for (const RankShard& shard : shards) check_recorded_layout(shard.layout, "shard");
  return shards;
}

std::vector<std::vector<RankShard>> shard_on_ranks(Implementation& impl, const LayoutSpec& spec,
                                                   const Batch& batch) {
  return on_ranks(spec.cp,
                  [&](Comm& comm, std::int64_t) { return checked_shard(impl, comm, spec, batch); });
}

ShardLayout reference_layout(const ShardPlan& microbatch, std::int64_t rank) {
  const RowPlan& first = microbatch.rows.front();
  ShardLayout out;
  out.layout = microbatch.spec.layout;
  out.cp = first.cp;
  out.rank = rank;
  out.padded_len = first.padded_len;
  out.original_len = first.original_len;
  out.caller_len = first.caller_len;
  out.rows = static_cast<std::int64_t>(microbatch.rows.size());
  out.packed = first.packed;
  out.pad_policy = microbatch.spec.pad_policy;
  out.pad_token_id = microbatch.spec.pad_token_id;
  for (const RowPlan& row : microbatch.rows) {
    const std::vector<std::int64_t>& index = row.index[static_cast<std::size_t>(rank)];
    out.index.push_back(index);
    auto& caller_pos = out.caller_pos.emplace_back();
    auto& positions = out.positions.emplace_back();
    auto& doc_ids = out.doc_ids.emplace_back();
    auto& real = out.real.emplace_back();
    for (std::int64_t g : index) {
      caller_pos.push_back(row.caller_pos[static_cast<std::size_t>(g)]);
      positions.push_back(row.positions[static_cast<std::size_t>(g)]);
      doc_ids.push_back(row.doc_ids[static_cast<std::size_t>(g)]);
      real.push_back(row.real[static_cast<std::size_t>(g)]);
    }
    out.cu_seqlens.push_back(row.local_cu_seqlens.empty()
                                 ? std::vector<std::int64_t>{}
                                 : row.local_cu_seqlens[static_cast<std::size_t>(rank)]);
    out.valid_tokens.push_back(row.valid_tokens[static_cast<std::size_t>(rank)]);
    out.cu_seqlens_padded.push_back(row.cu_seqlens_padded);
    out.map.push_back(row.map);
    if (!row.varlen.empty()) out.varlen.push_back(row.varlen[static_cast<std::size_t>(rank)]);
  }
  return out;
}

std::string failure_prefix(const Case& c) { return case_headline(c) + ": "; }

}  // namespace cplab::properties
