// The Sharder binds implementation, Comm and spec once: verbs before the first shard are refused,
// and after it they act on the recorded layout of the microbatch asked for.
#include "sim/sharder.hpp"

#include <gtest/gtest.h>

#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

TEST(Sharder, data_dependent_layout_refuses_verbs_before_the_first_shard) {
  sim::SimImplementation impl;
  sim::World world(2);
  const std::string message = error_of([&] {
    world.run([&](sim::RankContext& ctx) {
      sim::Sharder sharder(impl, ctx.comm, spec_for("thd", 2));
      sharder.gather_token_tensor(Tensor(DType::f32, {1, 8}));
    });
  });
  EXPECT_NE(message.find("thd: no batch sharded yet"), std::string::npos) << message;
}

TEST(Sharder, shards_each_microbatch_and_gathers_it_back) {
  sim::SimImplementation impl;
  const Batch batch = packed_batch({{5, 3}, {9, 1, 2}}, 14);
  const LayoutSpec spec = spec_for("thd", 2, 2);
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
    CPLAB_CHECK(sharder.layout(1).padded_len == 20 && sharder.layout(0).padded_len == 16,
                "each packed row has its own L: got {} and {}", sharder.layout(0).padded_len,
                sharder.layout(1).padded_len);
  });
  for (std::int64_t m = 0; m < 2; ++m) {
    const Tensor row = rows_slice(batch.at(keys::input_ids), m, m + 1);
    // Each document's real tokens come back; thd drops no real token.
    const auto& lens = batch.seq_lens[static_cast<std::size_t>(m)];
    std::int64_t at = 0;
    for (std::int64_t len : lens) {
      for (std::int64_t t = at; t < at + len; ++t)
        EXPECT_EQ(back[m][0].get(t), row.get(t)) << "microbatch " << m << " slot " << t;
      at += len;
    }
  }
}

}  // namespace
}  // namespace cplab::simtest
