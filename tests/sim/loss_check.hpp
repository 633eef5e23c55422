#pragma once
// The loss check the tests share: run an implementation's shifted_cp_loss on every rank of every
// microbatch and compare it with the reference, returning what disagrees ("" when all agree).
// Fault-injection tests assert that it reports a broken piece; the others that it reports nothing.
#include <fmt/format.h>

#include <cmath>
#include <mutex>

#include "reference/loss.hpp"
#include "reference/verbs.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {

// Logits as a pure function of (row, caller position, vocabulary entry).
inline Tensor logits_for(std::int64_t rows, std::int64_t seq, std::int64_t vocab) {
  Tensor t(DType::f32, {rows, seq, vocab});
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::sin(0.37 * static_cast<double>(i)) * 2.0);
  return t;
}

struct LossInputs {
  Tensor logits;  // [B, S, V] caller coordinates
  Tensor labels;  // the batch's labels
  Tensor valid;   // the batch's loss_mask
};

inline LossInputs loss_inputs(const Batch& batch, std::int64_t vocab) {
  return {logits_for(batch.rows(), batch.seq_len(), vocab), batch.at(keys::labels),
          batch.at(keys::loss_mask)};
}

inline std::string check_loss_against_reference(const LayoutSpec& spec, const Batch& batch,
                                                Implementation* impl = nullptr,
                                                sim::WorldOptions options = {},
                                                std::int64_t* faults_fired = nullptr,
                                                std::int64_t vocab = 11) {
  const ShardPlan plan = reference::plan(spec, batch);
  const LossInputs in = loss_inputs(batch, vocab);
  const std::int64_t per = plan.rows_per_microbatch();
  std::vector<reference::LossReference> expected;
  for (std::int64_t m = 0; m < spec.microbatches; ++m) {
    expected.push_back(reference::shifted_loss_caller(
        reference::microbatch_plan(plan, m), rows_slice(in.logits, m * per, (m + 1) * per),
        rows_slice(in.labels, m * per, (m + 1) * per),
        rows_slice(in.valid, m * per, (m + 1) * per)));
  }
  std::mutex mutex;
  std::vector<std::string> problems;
  const std::string error = error_of([&] {
    sim::SimImplementation standard;
    Implementation& chosen = impl != nullptr ? *impl : standard;
    on_every_rank(
        spec, batch,
        [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          for (std::int64_t m = 0; m < static_cast<std::int64_t>(shards.size()); ++m) {
            const ShardLayout& layout = shards[m].layout;
            const Tensor logits = chosen.shard_token_tensor(
                ctx.comm, layout, rows_slice(in.logits, m * per, (m + 1) * per), 1, 0.0);
            const LossOutput out =
                chosen.shifted_cp_loss(ctx.comm, layout, logits, shards[m].local.at(keys::labels),
                                       shards[m].local.at(keys::loss_mask), 1);
            const reference::LossReference& ref = expected[m];
            Tensor grad = reference::select_rank(reference::microbatch_plan(plan, m),
                                                 ref.grad_global, 1, ctx.rank);
            for (std::int64_t i = 0; i < grad.numel(); ++i)
              grad.set(i, grad.get(i) * static_cast<double>(spec.cp));
            const std::string where = fmt::format("microbatch {} rank {}", m, ctx.rank);
            std::lock_guard lock(mutex);
            const double loss_error = std::abs(out.loss - ref.rank_loss[ctx.rank]);
            if (loss_error > 1e-6 + 1e-5 * std::abs(ref.rank_loss[ctx.rank])) {
              problems.push_back(fmt::format("{}: loss {} vs reference {}", where, out.loss,
                                             ref.rank_loss[ctx.rank]));
            }
            if (out.contributing_total != ref.contributing_total) {
              problems.push_back(fmt::format("{}: N {} vs reference {}", where,
                                             out.contributing_total, ref.contributing_total));
            }
            if (out.contributing_local != ref.rank_contributing[ctx.rank]) {
              problems.push_back(fmt::format("{}: local count {} vs reference {}", where,
                                             out.contributing_local,
                                             ref.rank_contributing[ctx.rank]));
            }
            if (closeness(out.grad, grad) > 1.0)
              problems.push_back(
                  fmt::format("{}: gradient differs from C × the reference's", where));
          }
        },
        impl, std::move(options), faults_fired);
  });
  if (!error.empty()) problems.push_back("error: " + error);
  return fmt::format("{}", fmt::join(problems, "\n"));
}

}  // namespace cplab::simtest
