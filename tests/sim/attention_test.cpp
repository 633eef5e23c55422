// Attention equivalence (SPEC §7): every rank's local queries against keys and values gathered
// from all ranks, under the document-causal mask, give the unsharded computation's rows, and the
// Q/K/V gradients after the backward transport equal the unsharded gradients of the local tokens.
#include "reference/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>

#include "reference/verbs.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

class AttentionTest : public ::testing::TestWithParam<LayoutCp> {};

Tensor wave(std::int64_t rows, std::int64_t len, std::int64_t dim, double phase) {
  Tensor t(DType::f32, {rows, len, dim});
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::sin(0.61 * static_cast<double>(i) + phase));
  return t;
}

TEST_P(AttentionTest, local_attention_and_gradients_equal_the_unsharded_rows) {
  const auto& [layout, cp] = GetParam();
  int checked = 0;
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    ShardPlan plan;
    if (!error_of([&] { plan = reference::plan(spec, c.batch); }).empty()) continue;
    ++checked;
    std::mutex mutex;
    std::vector<std::string> problems;
    on_every_rank(spec, c.batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
      sim::SimImplementation sim;
      for (std::size_t m = 0; m < shards.size(); ++m) {
        const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
        const ShardLayout& lay = shards[m].layout;
        const Tensor q = wave(lay.rows, lay.padded_len, 4, 0.0),
                     k = wave(lay.rows, lay.padded_len, 4, 1.0);
        const Tensor v = wave(lay.rows, lay.padded_len, 4, 2.0),
                     d = wave(lay.rows, lay.padded_len, 4, 3.0);
        const reference::AttentionReference ref = reference::attention(part, q, k, v, d);
        auto local = [&](const Tensor& global) {
          return reference::select_rank(part, global, 1, ctx.rank);
        };
        const AttentionOutput out =
            sim.attention(ctx.comm, lay, local(q), local(k), local(v), local(d));
        std::lock_guard lock(mutex);
        const std::string where =
            "microbatch " + std::to_string(m) + " rank " + std::to_string(ctx.rank) + ": ";
        if (closeness(out.out, local(ref.out)) > 1.0) problems.push_back(where + "output");
        if (closeness(out.grad_q, local(ref.grad_q)) > 1.0) problems.push_back(where + "dQ");
        if (closeness(out.grad_k, local(ref.grad_k)) > 1.0) problems.push_back(where + "dK");
        if (closeness(out.grad_v, local(ref.grad_v)) > 1.0) problems.push_back(where + "dV");
      }
    });
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  }
  if (checked == 0) GTEST_SKIP() << layout << " refuses every batch at cp=" << cp;
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, AttentionTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

}  // namespace
}  // namespace cplab::simtest
