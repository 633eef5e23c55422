// gather_token_tensor and gather_tokens with their backwards, for every layout and C: shard then
// gather (trim) gives the caller's tensor back; the backward sums every rank's gradient to the
// owner (C× a replicated gradient on owned slots, 0 on padding); gather_tokens keeps rank order.
#include <gtest/gtest.h>

#include <mutex>

#include "core/token_moves.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

class GatherTest : public ::testing::TestWithParam<LayoutCp> {};

void scale_in_place(Tensor& t, double factor) {
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * factor);
}

// The caller tensor with every caller position no slot holds zeroed: what a trim can give back.
Tensor reachable_part(const ShardPlan& part, const Tensor& caller, std::int64_t seq_dim) {
  const TokenAxes axes = token_axes(caller, seq_dim, "reachable_part");
  Tensor out(caller.dtype(), caller.shape());
  for (std::int64_t b = 0; b < axes.rows; ++b) {
    for (std::int64_t c : part.rows[static_cast<std::size_t>(b)].caller_pos) {
      if (c < 0) continue;
      for (std::int64_t o = 0; o < axes.outer; ++o) {
        for (std::int64_t e = 0; e < axes.inner; ++e) {
          const std::int64_t at = axes.token(o, b, c) * axes.inner + e;
          out.set(at, caller.get(at));
        }
      }
    }
  }
  return out;
}

TEST_P(GatherTest, shard_then_gather_gives_back_the_caller_tensor) {
  for_each_plannable_case(
      GetParam(), [](const LayoutSpec& spec, const Batch& batch, const ShardPlan& plan) {
        std::mutex mutex;
        std::vector<std::string> problems;
        on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          sim::SimImplementation sim;
          for (std::size_t m = 0; m < shards.size(); ++m) {
            const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
            const ShardLayout& layout = shards[m].layout;
            const std::int64_t per = plan.rows_per_microbatch(),
                               first = static_cast<std::int64_t>(m) * per;
            const Tensor caller = located(DType::f32, {layout.rows, layout.caller_len, 3});
            const Tensor local = sim.shard_token_tensor(ctx.comm, layout, caller, 1, 0.0);
            const Tensor global = sim.gather_token_tensor(ctx.comm, layout, local, 1, false);
            const TokenField as_field{
                .value = caller, .seq_dim = 1, .rule = PadRule::constant, .pad_value = 0.0};
            std::vector<std::string> mine;
            if (!(sim.gather_token_tensor(ctx.comm, layout, local, 1, true) ==
                  reachable_part(part, caller, 1)))
              mine.push_back("trimmed gather");
            if (!(global == reference::pad_to_global(part, as_field)))
              mine.push_back("global gather");
            // Every key of the batch the shard cut (any dtype, trailing dims, mRoPE's seq dim 2)
            // comes back.
            for (const auto& [name, field] : batch.tokens) {
              const bool shared = field.value.size(field.seq_dim - 1) != batch.rows();
              if (shared || (name == batch.primary() && !spec.shard_primary)) continue;
              const Tensor back = sim.gather_token_tensor(
                  ctx.comm, layout, shards[m].local.at(name), field.seq_dim, true);
              const Tensor caller_rows = slice_rows(field.value, field.seq_dim, first, first + per);
              if (!(back == reachable_part(part, caller_rows, field.seq_dim)))
                mine.push_back("key " + name);
            }
            std::lock_guard lock(mutex);
            for (const std::string& what : mine)
              problems.push_back(what + " of rank " + std::to_string(ctx.rank));
          }
        });
        EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
      });
}

TEST_P(GatherTest, backward_sums_every_ranks_gradient_to_the_owner) {
  for_each_plannable_case(GetParam(), [](const LayoutSpec& spec, const Batch& batch,
                                         const ShardPlan& plan) {
    const double cp = static_cast<double>(spec.cp);
    std::mutex mutex;
    std::vector<std::string> problems;
    on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
      sim::SimImplementation sim;
      for (std::size_t m = 0; m < shards.size(); ++m) {
        const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
        const ShardLayout& layout = shards[m].layout;
        // A gradient every rank holds alike (a loss replicated on all ranks): C× on owned, 0 on
        // padding.
        const Tensor global = located(DType::f32, {layout.rows, layout.padded_len, 2});
        const Tensor caller = located(DType::f32, {layout.rows, layout.caller_len, 2});
        const Tensor same_global =
            sim.gather_token_tensor_backward(ctx.comm, layout, global, 1, false);
        const Tensor same_caller =
            sim.gather_token_tensor_backward(ctx.comm, layout, caller, 1, true);
        // Rank r holding (r+1)× the gradient: the owner receives the sum, C(C+1)/2 ×, not its own
        // share.
        Tensor mine = global;
        scale_in_place(mine, ctx.rank + 1.0);
        const Tensor summed = sim.gather_token_tensor_backward(ctx.comm, layout, mine, 1, false);
        Tensor expected_sum = reference::select_rank(part, global, 1, ctx.rank);
        scale_in_place(expected_sum, cp * (cp + 1.0) / 2.0);
        std::lock_guard lock(mutex);
        const std::string rank = " of rank " + std::to_string(ctx.rank);
        if (!(same_global ==
              reference::gather_token_tensor_backward(part, global, 1, false, ctx.rank)))
          problems.push_back("replicated global gradient" + rank);
        if (!(same_caller ==
              reference::gather_token_tensor_backward(part, caller, 1, true, ctx.rank)))
          problems.push_back("replicated trimmed gradient" + rank);
        if (closeness(summed, expected_sum) > 1.0)
          problems.push_back("per-rank gradients not summed" + rank);
      }
    });
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  });
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, GatherTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

class GatherTokensTest : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(GatherTokensTest, gathers_in_rank_order_and_sums_gradients_to_owners) {
  const int cp = static_cast<int>(GetParam());
  const std::int64_t len = 3;
  sim::World world(cp);
  sim::SimImplementation sim;
  std::vector<Tensor> gathered(static_cast<std::size_t>(cp)), grads(static_cast<std::size_t>(cp));
  const Tensor every = located(DType::f32, {cp * len, 2});  // row r·ℓ + k: rank r's token k
  world.run([&](sim::RankContext& ctx) {
    const Tensor mine = rows_slice(every, ctx.rank * len, (ctx.rank + 1) * len);
    gathered[ctx.rank] = sim.gather_tokens(ctx.comm, mine);
    Tensor grad = every;
    scale_in_place(grad, ctx.rank + 1.0);
    grads[ctx.rank] = sim.gather_tokens_backward(ctx.comm, grad);
  });
  for (int r = 0; r < cp; ++r) {
    EXPECT_TRUE(gathered[r] == every) << "rank " << r;
    Tensor expected = rows_slice(every, r * len, (r + 1) * len);
    scale_in_place(expected, cp * (cp + 1.0) / 2.0);
    EXPECT_LE(closeness(grads[r], expected), 1.0) << "rank " << r;
  }
}

TEST(GatherTokensErrors, disagreeing_local_counts_are_an_error_naming_them) {
  sim::World world(3);
  sim::SimImplementation sim;
  const std::string message = error_of([&] {
    world.run([&](sim::RankContext& ctx) {
      sim.gather_tokens(ctx.comm, Tensor(DType::f32, {ctx.rank == 2 ? 4 : 3, 2}));
    });
  });
  EXPECT_NE(message.find("sizes disagree: rank 0: 6 x f32, rank 1: 6 x f32, rank 2: 8 x f32"),
            std::string::npos)
      << message;
}

std::string cp_name(const ::testing::TestParamInfo<std::int64_t>& param_info) {
  return "cp" + std::to_string(param_info.param);
}
INSTANTIATE_TEST_SUITE_P(Sizes, GatherTokensTest, ::testing::ValuesIn(cp_sizes()), cp_name);

}  // namespace
}  // namespace cplab::simtest
