#pragma once
// Whole-verb checks of an implementation against the reference, each returning what disagrees
// ("" when all agree): the partition and shard of a batch, and the gathers with their backwards.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <mutex>

#include "reference/verbs.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {

inline std::string check_shard_against_reference(const LayoutSpec& spec, const Batch& batch,
                                                 Implementation& impl) {
  const ShardPlan plan = reference::plan(spec, batch);
  const auto expected = reference::shard_batch(plan, batch);
  std::mutex mutex;
  std::vector<std::string> problems;
  const std::string error = error_of([&] {
    on_every_rank(
        spec, batch,
        [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          const std::int64_t per = plan.rows_per_microbatch();
          for (std::size_t m = 0; m < shards.size(); ++m) {
            const ShardLayout& lay = shards[m].layout;
            const RowPlan& row = plan.rows[m * static_cast<std::size_t>(per)];
            const std::string where = fmt::format("microbatch {} rank {}: ", m, ctx.rank);
            std::lock_guard lock(mutex);
            if (lay.index[0] != row.index[ctx.rank]) problems.push_back(where + "index map");
            if (!row.local_cu_seqlens.empty() &&
                lay.cu_seqlens[0] != row.local_cu_seqlens[ctx.rank])
              problems.push_back(where + "cu_seqlens");
            for (const auto& [name, field] : expected[m][ctx.rank].tokens) {
              if (!shards[m].local.has(name) || !(shards[m].local.at(name) == field.value))
                problems.push_back(where + name);
            }
          }
        },
        &impl);
  });
  if (!error.empty()) problems.push_back("error: " + error);
  return fmt::format("{}", fmt::join(problems, "; "));
}

inline std::string check_gathers_against_reference(const LayoutSpec& spec, const Batch& batch,
                                                   Implementation& impl) {
  const ShardPlan plan = reference::plan(spec, batch);
  const double cp = static_cast<double>(spec.cp);
  std::mutex mutex;
  std::vector<std::string> problems;
  const std::string error = error_of([&] {
    on_every_rank(
        spec, batch,
        [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          const ShardPlan part = reference::microbatch_plan(plan, 0);
          const ShardLayout& lay = shards[0].layout;
          const Tensor global = located(DType::f32, {lay.rows, lay.padded_len, 2});
          const Tensor local = reference::select_rank(part, global, 1, ctx.rank);
          const Tensor gathered = impl.gather_token_tensor(ctx.comm, lay, local, 1, false);
          Tensor mine = global;  // rank r holds (r+1)× the gradient: the owner must get the sum
          for (std::int64_t i = 0; i < mine.numel(); ++i)
            mine.set(i, mine.get(i) * (ctx.rank + 1.0));
          const Tensor summed = impl.gather_token_tensor_backward(ctx.comm, lay, mine, 1, false);
          Tensor expected = local;
          for (std::int64_t i = 0; i < expected.numel(); ++i)
            expected.set(i, expected.get(i) * cp * (cp + 1.0) / 2.0);
          // gather_tokens' backward on the same per-rank gradients viewed as [C·ℓ', 2] token rows.
          const Tensor flat = mine.reshaped({lay.rows * lay.padded_len, 2});
          const Tensor token_grad = impl.gather_tokens_backward(ctx.comm, flat);
          std::lock_guard lock(mutex);
          const std::string where = fmt::format("rank {}: ", ctx.rank);
          if (!(gathered == global)) problems.push_back(where + "gather_token_tensor");
          if (closeness(summed, expected) > 1.0)
            problems.push_back(where + "gather_token_tensor_backward");
          const std::int64_t slice = lay.rows * lay.padded_len / spec.cp;
          Tensor want = rows_slice(flat, ctx.rank * slice, (ctx.rank + 1) * slice);
          for (std::int64_t i = 0; i < want.numel(); ++i)
            want.set(i, want.get(i) / (ctx.rank + 1.0) * cp * (cp + 1.0) / 2.0);
          if (closeness(token_grad, want) > 1.0)
            problems.push_back(where + "gather_tokens_backward");
        },
        &impl);
  });
  if (!error.empty()) problems.push_back("error: " + error);
  return fmt::format("{}", fmt::join(problems, "; "));
}

}  // namespace cplab::simtest
