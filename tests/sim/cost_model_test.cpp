// The cost model: causal work per rank equals the reference's counting for every layout and C;
// its predicted bytes per verb equal what ThreadComm counts when the sim runs the verb. SPEC §9's
// work figures of one layout live in its own file (tests/sim/layouts/ID_test.cpp).
#include "layouts/cost_model.hpp"

#include <gtest/gtest.h>

#include <mutex>

#include "layouts/index_math.hpp"
#include "reference/work.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

class CostModelTest : public ::testing::TestWithParam<LayoutCp> {};

TEST_P(CostModelTest, causal_work_equals_reference_counting) {
  const auto& [layout, cp] = GetParam();
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    ShardPlan plan;
    if (!error_of([&] { plan = reference::plan(spec, c.batch); }).empty()) continue;
    const auto micro = sim::microbatch_rows(spec, c.batch);
    for (std::int64_t m = 0; m < spec.microbatches; ++m) {
      const auto costs = sim::rank_costs(spec, micro[m]);
      std::vector<std::int64_t> expected(static_cast<std::size_t>(cp), 0),
          valid(static_cast<std::size_t>(cp), 0);
      for (std::int64_t b = 0; b < plan.rows_per_microbatch(); ++b) {
        const RowPlan& row =
            plan.rows[static_cast<std::size_t>(m * plan.rows_per_microbatch() + b)];
        const auto work = reference::causal_work(row);
        for (std::int64_t r = 0; r < cp; ++r) {
          expected[r] += work[r];
          valid[r] += row.valid_tokens[r];
        }
      }
      for (std::int64_t r = 0; r < cp; ++r) {
        EXPECT_EQ(costs[r].causal_work, expected[r]) << "microbatch " << m << " rank " << r;
        EXPECT_EQ(costs[r].valid_tokens, valid[r]) << "microbatch " << m << " rank " << r;
      }
    }
  }
}

// Runs one verb per World and reads what each rank sent.
TEST_P(CostModelTest, predicted_bytes_equal_measured_bytes) {
  const auto& [layout, cp] = GetParam();
  sim::CostShapes shapes{.token_elements = 3, .element_bytes = 4, .head_dim = 2, .loss_depth = 1};
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    if (!error_of([&] { reference::plan(spec, c.batch); }).empty()) continue;
    const auto micro = sim::microbatch_rows(spec, c.batch);
    // The loss at depths 1-4 (SPEC §6.1): one exchange a depth, 16 bytes a target on another rank.
    const std::vector<std::string> verbs = {
        "shard",           "gather_token_tensor",    "gather_token_tensor_backward",
        "gather_tokens",   "gather_tokens_backward", "shifted_cp_loss",
        "shifted_cp_loss", "shifted_cp_loss",        "shifted_cp_loss",
        "attention"};
    std::int64_t depth = 0;
    for (const std::string& verb : verbs) {
      if (verb == "shifted_cp_loss") ++depth;
      SCOPED_TRACE(verb + " depth " + std::to_string(depth));
      shapes.loss_depth = std::max<std::int64_t>(depth, 1);
      const auto costs = sim::rank_costs(spec, micro[0], shapes);
      sim::World world(static_cast<int>(cp));
      sim::SimImplementation sim;
      world.run([&](sim::RankContext& ctx) {
        const RankShard shard = sim.shard(ctx.comm, spec, c.batch)[0];
        const ShardLayout& lay = shard.layout;
        const Tensor tokens(DType::f32, {lay.rows, lay.local_len(), 3});
        const Tensor one_row(DType::f32, {lay.local_len(), 3});
        const Tensor qkv(DType::f32, {lay.rows, lay.local_len(), 2});
        if (verb == "gather_token_tensor") sim.gather_token_tensor(ctx.comm, lay, tokens, 1, false);
        if (verb == "gather_token_tensor_backward") {
          sim.gather_token_tensor_backward(
              ctx.comm, lay, Tensor(DType::f32, {lay.rows, lay.padded_len, 3}), 1, false);
        }
        if (verb == "gather_tokens") {
          for (std::int64_t b = 0; b < lay.rows; ++b) sim.gather_tokens(ctx.comm, one_row);
        }
        if (verb == "gather_tokens_backward") {
          for (std::int64_t b = 0; b < lay.rows; ++b)
            sim.gather_tokens_backward(ctx.comm, Tensor(DType::f32, {cp * lay.local_len(), 3}));
        }
        if (verb == "shifted_cp_loss") {
          sim.shifted_cp_loss(ctx.comm, lay, Tensor(DType::f32, {lay.rows, lay.local_len(), 11}),
                              shard.local.at(keys::labels), Tensor(), depth);
        }
        if (verb == "attention") sim.attention(ctx.comm, lay, qkv, qkv, qkv, qkv);
      });
      for (std::int64_t r = 0; r < cp; ++r) {
        const sim::VerbBytes& v = costs[r].bytes;
        const std::uint64_t predicted =
            verb == "shard"                          ? v.shard
            : verb == "gather_token_tensor"          ? v.gather_token_tensor
            : verb == "gather_token_tensor_backward" ? v.gather_token_tensor_backward
            : verb == "gather_tokens"                ? v.gather_tokens
            : verb == "gather_tokens_backward"       ? v.gather_tokens_backward
            : verb == "shifted_cp_loss"              ? v.loss_exchange + v.loss_count
                                                     : v.attention;
        EXPECT_EQ(world.bytes_sent()[r], predicted) << "rank " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, CostModelTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

}  // namespace
}  // namespace cplab::simtest
