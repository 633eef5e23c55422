// The Sharder binds implementation, Comm and spec once: verbs before the first shard are refused,
// and after it they act on the recorded layout of the microbatch asked for.
#include "implementation/sharder.hpp"

#include <gtest/gtest.h>

#include "reference/verbs.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

// Every layout whose map is data dependent (computed from the row, not C and L alone) refuses a
// verb before the first shard, naming itself.
TEST(Sharder, data_dependent_layout_refuses_verbs_before_the_first_shard) {
  int layouts_tried = 0;
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    if (descriptor.cp_off || descriptor.map.source == sim::MapSource::shape) continue;
    ++layouts_tried;
    const std::string layout = descriptor.name;
    sim::SimImplementation impl;
    sim::World world(2);
    const std::string message = error_of([&] {
      world.run([&](sim::RankContext& ctx) {
        sim::Sharder sharder(impl, ctx.comm, spec_for(layout, 2));
        sharder.gather_token_tensor(Tensor(DType::f32, {1, 8}));
      });
    });
    EXPECT_NE(message.find(layout + ": no batch sharded yet"), std::string::npos) << message;
  }
  EXPECT_GE(layouts_tried, 1) << "no layout's map is data dependent";
}

// Every layout that takes the two packed rows at C = 2 in two microbatches: each microbatch has the
// L the reference plans for it (at least one layout plans two different L), and each document's
// real tokens come back from the gather.
TEST(Sharder, shards_each_microbatch_and_gathers_it_back) {
  const Batch batch = packed_batch({{5, 3}, {9, 1, 2}}, 14);
  int own_lengths = 0;
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    const std::string layout = descriptor.name;
    const LayoutSpec spec = spec_for(layout, 2, 2);
    ShardPlan plan;
    if (descriptor.cp_off || !error_of([&] { plan = reference::plan(spec, batch); }).empty())
      continue;
    SCOPED_TRACE(layout);
    const std::int64_t want0 = reference::microbatch_plan(plan, 0).rows[0].padded_len;
    const std::int64_t want1 = reference::microbatch_plan(plan, 1).rows[0].padded_len;
    own_lengths += want0 != want1 ? 1 : 0;
    sim::SimImplementation impl;
    std::vector<std::vector<Tensor>> back(2);
    sim::World world(2);
    world.run([&](sim::RankContext& ctx) {
      sim::Sharder sharder(impl, ctx.comm, spec);
      const std::vector<Batch> locals = sharder.shard(batch);
      CPLAB_CHECK(locals.size() == 2, "two microbatches, got {}", locals.size());
      for (std::int64_t m = 0; m < 2; ++m) {
        const Tensor ids = sharder.gather_token_tensor(locals[m].at(keys::input_ids), 1, true, m);
        if (ctx.rank == 0) back[m].push_back(ids);
      }
      CPLAB_CHECK(sharder.layout(0).padded_len == want0 && sharder.layout(1).padded_len == want1,
                  "each packed row has its own L: got {} and {}, the reference plans {} and {}",
                  sharder.layout(0).padded_len, sharder.layout(1).padded_len, want0, want1);
    });
    for (std::int64_t m = 0; m < 2; ++m) {
      const Tensor row = rows_slice(batch.at(keys::input_ids), m, m + 1);
      // Each document's real tokens come back; no layout drops a real token.
      const auto& lens = batch.seq_lens[static_cast<std::size_t>(m)];
      std::int64_t at = 0;
      for (std::int64_t len : lens) {
        for (std::int64_t t = at; t < at + len; ++t)
          EXPECT_EQ(back[m][0].get(t), row.get(t)) << "microbatch " << m << " slot " << t;
        at += len;
      }
    }
  }
  EXPECT_GE(own_lengths, 1) << "no layout plans the two rows at two lengths: L is never checked";
}

}  // namespace
}  // namespace cplab::simtest
