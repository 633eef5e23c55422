// The sim's shard and shard_token_tensor against the reference's global shard, for every layout,
// C and batch shape; shard_primary = false followed by the later primary shard; both pad policies.
#include <gtest/gtest.h>

#include <mutex>

#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "sim_runner.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::simtest {
namespace {

class ShardTest : public ::testing::TestWithParam<LayoutCp> {};

// Each rank's local batch, per microbatch, as the sim sharded it.
std::vector<std::vector<Batch>> sim_shards(const LayoutSpec& spec, const Batch& batch) {
  std::vector<std::vector<Batch>> out(static_cast<std::size_t>(spec.microbatches),
                                      std::vector<Batch>(static_cast<std::size_t>(spec.cp)));
  on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
    for (std::size_t m = 0; m < shards.size(); ++m) out[m][ctx.rank] = shards[m].local;
  });
  return out;
}

void expect_same_batches(const std::vector<std::vector<Batch>>& mine,
                         const std::vector<std::vector<Batch>>& expected) {
  ASSERT_EQ(mine.size(), expected.size());
  for (std::size_t m = 0; m < mine.size(); ++m) {
    for (std::size_t r = 0; r < mine[m].size(); ++r) {
      SCOPED_TRACE(::testing::Message() << "microbatch " << m << " rank " << r);
      const Batch& a = mine[m][r];
      const Batch& b = expected[m][r];
      ASSERT_EQ(a.tokens.size(), b.tokens.size());
      for (const auto& [name, field] : b.tokens) {
        ASSERT_TRUE(a.has(name)) << name;
        EXPECT_TRUE(a.tokens.at(name).value == field.value)
            << name << ": sim " << tensor_brief(a.tokens.at(name).value) << " vs reference "
            << tensor_brief(field.value);
        EXPECT_EQ(a.tokens.at(name).seq_dim, field.seq_dim) << name;
      }
      ASSERT_EQ(a.passthrough.size(), b.passthrough.size());
      for (const auto& [name, value] : b.passthrough)
        EXPECT_TRUE(a.passthrough.at(name) == value) << name;
    }
  }
}

TEST_P(ShardTest, shard_equals_reference_for_both_pad_policies) {
  for_each_plannable_case(GetParam(), [](LayoutSpec spec, const Batch& batch, const ShardPlan&) {
    spec.pad_token_id = 9;
    for (PadPolicy policy : {PadPolicy::spec, PadPolicy::zero}) {
      spec.pad_policy = policy;
      expect_same_batches(sim_shards(spec, batch),
                          reference::shard_batch(reference::plan(spec, batch), batch));
    }
  });
}

TEST_P(ShardTest, primary_sharded_later_equals_primary_sharded_at_once) {
  for_each_plannable_case(
      GetParam(), [](LayoutSpec spec, const Batch& batch, const ShardPlan& plan) {
        spec.shard_primary = false;
        const std::string primary = batch.primary();
        std::mutex mutex;
        std::vector<std::pair<Tensor, Tensor>> later_and_reference;
        on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          sim::SimImplementation sim;
          const auto expected = reference::shard_batch(plan, batch);
          for (std::size_t m = 0; m < shards.size(); ++m) {
            const Batch& local = shards[m].local;
            Tensor later = sim.shard_primary_later(ctx.comm, shards[m].layout, local);
            std::lock_guard lock(mutex);
            later_and_reference.emplace_back(std::move(later), expected[m][ctx.rank].at(primary));
          }
        });
        for (const auto& [later, expected] : later_and_reference)
          EXPECT_TRUE(later == expected) << tensor_brief(later);
      });
}

TEST_P(ShardTest, shard_token_tensor_accepts_padded_caller_and_thd_lengths_like_reference) {
  for_each_plannable_case(GetParam(), [](const LayoutSpec& spec, const Batch& batch,
                                         const ShardPlan& plan) {
    const std::int64_t per = plan.rows_per_microbatch();
    std::mutex mutex;
    std::vector<std::string> problems;
    on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
      sim::SimImplementation sim;
      for (std::size_t m = 0; m < shards.size(); ++m) {
        const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
        const ShardLayout& layout = shards[m].layout;
        const Tensor padded = located(DType::f32, {per, layout.padded_len, 2});
        const Tensor caller = located(DType::bf16, {per, layout.caller_len, 2});
        const Tensor wrong = located(DType::f32, {per, layout.padded_len + 1});
        const Tensor a = sim.shard_token_tensor(ctx.comm, layout, padded, 1, std::nullopt);
        const Tensor b = sim.shard_token_tensor(ctx.comm, layout, caller, 1, -1.5);
        const std::string sim_error =
            error_of([&] { sim.shard_token_tensor(ctx.comm, layout, wrong, 1, std::nullopt); });
        std::lock_guard lock(mutex);
        if (!(a == reference::shard_token_tensor(part, padded, 1, std::nullopt, ctx.rank)))
          problems.push_back("padded length");
        if (!(b == reference::shard_token_tensor(part, caller, 1, -1.5, ctx.rank)))
          problems.push_back("caller length with fill");
        if (sim_error.find(std::to_string(layout.padded_len + 1)) == std::string::npos ||
            sim_error.find("L=" + std::to_string(layout.padded_len)) == std::string::npos) {
          problems.push_back("wrong length error: " + sim_error);
        }
        if (layout.caller_len != layout.padded_len &&
            !layout.packed) {  // S without fill is refused
          const std::string no_fill =
              error_of([&] { sim.shard_token_tensor(ctx.comm, layout, caller, 1, std::nullopt); });
          if (no_fill.find("explicit fill") == std::string::npos)
            problems.push_back("S without fill: " + no_fill);
        }
      }
    });
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  });
}

TEST(ShardErrors, verbs_refuse_a_layout_never_recorded) {
  sim::SimImplementation sim;
  sim::World world(2);
  const std::string message = error_of([&] {
    world.run([&](sim::RankContext& ctx) {
      sim.shard_token_tensor(ctx.comm, ShardLayout{}, located(DType::f32, {1, 4}), 1, std::nullopt);
    });
  });
  EXPECT_NE(message.find("shard a batch first"), std::string::npos) << message;
}

TEST(ShardErrors, comm_size_must_match_the_spec) {
  const std::string layout = testsupport::a_plain_layout();
  sim::SimImplementation sim;
  sim::World world(2);
  const std::string message = error_of([&] {
    world.run(
        [&](sim::RankContext& ctx) { sim.shard(ctx.comm, spec_for(layout, 4), bshd_batch(1, 8)); });
  });
  EXPECT_NE(message.find("the comm has 2 ranks, the spec (" + layout + ") cp=4"), std::string::npos)
      << message;
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, ShardTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

}  // namespace
}  // namespace cplab::simtest
