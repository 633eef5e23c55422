// The Ulysses head all-to-all (SPEC §10.5) on sim ranks through the Sharder: a worked example by
// hand, the reference's head split for every layout and C, the inverse, and the refusals.
#include "reference/ulysses.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>

#include "implementation/sharder.hpp"
#include "reference/verbs.hpp"
#include "sim_runner.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::simtest {
namespace {

// [B, ℓ, H, 1] whose element (b, k, h) holds base + 10·g + h, g the global slot of local token k.
Tensor located(const ShardLayout& layout, std::int64_t heads, double base) {
  const std::int64_t len = layout.local_len();
  Tensor t(DType::f32, {layout.rows, len, heads, 1});
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      for (std::int64_t h = 0; h < heads; ++h) {
        t.set((b * len + k) * heads + h,
              base + 10.0 * static_cast<double>(layout.index[b][k]) + static_cast<double>(h));
      }
    }
  }
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
  return out;
}

// L = 8 on U = C = 2, H = 4 query heads, H_kv = 1 KV head, on every layout that lays the row out at
// L = 8: after the all-to-all every rank has all 8 slots in global order, rank 0 heads 0-1, rank 1
// heads 2-3, and both the one KV head (repeated), whichever slots each rank held before.
TEST(Ulysses, worked_example_by_hand) {
  int layouts_tried = 0;
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    const std::string layout = descriptor.name;
    if (descriptor.cp_off ||
        !error_of([&] { reference::plan(spec_for(layout, 2), bshd_batch(1, 8)); }).empty())
      continue;
    if (reference::plan(spec_for(layout, 2), bshd_batch(1, 8)).rows[0].padded_len != 8) continue;
    SCOPED_TRACE(layout);
    ++layouts_tried;
    sim::SimImplementation impl;
    const UlyssesHeads heads{.query = 4, .kv = 1};
    std::vector<std::vector<double>> query(2), kv(2);
    // One byte per rank: two ranks writing bits of one std::vector<bool> word would race.
    std::vector<char> round_trip(2, 0);
    sim::World world(2);
    world.run([&](sim::RankContext& ctx) {
      sim::Sharder sharder(impl, ctx.comm, spec_for(layout, 2));
      sharder.shard(bshd_batch(1, 8));
      const Tensor q = located(sharder.layout(), 4, 0.0), k = located(sharder.layout(), 1, 100.0);
      const Tensor q_heads = sharder.ulysses_all_to_all(q, heads, HeadKind::query);
      const Tensor k_heads = sharder.ulysses_all_to_all(k, heads, HeadKind::kv);
      const auto r = static_cast<std::size_t>(ctx.rank);
      query[r] = values(q_heads);
      kv[r] = values(k_heads);
      round_trip[r] = sharder.ulysses_all_to_all_inverse(q_heads, heads, HeadKind::query) == q &&
                      sharder.ulysses_all_to_all_inverse(k_heads, heads, HeadKind::kv) == k;
    });
    EXPECT_EQ(query[0],
              (std::vector<double>{0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61, 70, 71}));
    EXPECT_EQ(query[1],
              (std::vector<double>{2, 3, 12, 13, 22, 23, 32, 33, 42, 43, 52, 53, 62, 63, 72, 73}));
    const std::vector<double> kv_all{100, 110, 120, 130, 140, 150, 160, 170};
    EXPECT_EQ(kv[0], kv_all);
    EXPECT_EQ(kv[1], kv_all);
    EXPECT_TRUE(round_trip[0] && round_trip[1]);
  }
  EXPECT_GE(layouts_tried, 1) << "no layout lays out 8 tokens at L = 8 on two ranks";
}

// SPEC §9.14: U = 4, H = 8, H_kv = 2: ranks 0 and 1 hold KV head 0, ranks 2 and 3 KV head 1 (every
// element of rank r's buffer is 10·g + its KV head).
TEST(Ulysses, kv_heads_fewer_than_u_go_with_their_query_heads) {
  sim::SimImplementation impl;
  const UlyssesHeads heads{.query = 8, .kv = 2};
  std::vector<double> first_kv(4);
  std::vector<char> one_head(4, 0);
  sim::World world(4);
  world.run([&](sim::RankContext& ctx) {
    sim::Sharder sharder(impl, ctx.comm, spec_for(testsupport::a_plain_layout(), 4));
    sharder.shard(bshd_batch(1, 8));
    const Tensor k_heads =
        sharder.ulysses_all_to_all(located(sharder.layout(), 2, 0.0), heads, HeadKind::kv);
    CPLAB_CHECK(k_heads.shape() == (Shape{1, 8, 1, 1}), "KV heads {}", tensor_brief(k_heads));
    const auto r = static_cast<std::size_t>(ctx.rank);
    first_kv[r] = std::fmod(k_heads.get(0), 10.0);  // 10·g + head
    bool same = true;
    for (std::int64_t i = 0; i < k_heads.numel(); ++i)
      same = same && std::fmod(k_heads.get(i), 10.0) == first_kv[r];
    one_head[r] = same;
  });
  EXPECT_EQ(first_kv, (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(one_head, (std::vector<char>{1, 1, 1, 1}));
}

class UlyssesLayouts : public ::testing::TestWithParam<LayoutCp> {};

TEST_P(UlyssesLayouts, all_to_all_is_the_reference_head_split_and_inverts) {
  const std::int64_t cp = std::get<1>(GetParam());
  for (const UlyssesHeads heads :
       {UlyssesHeads{.query = 2 * cp, .kv = 1}, UlyssesHeads{.query = 2 * cp, .kv = cp}}) {
    for_each_plannable_case(GetParam(), [&](const LayoutSpec& spec, const Batch& batch,
                                            const ShardPlan& plan) {
      std::mutex mutex;
      std::vector<std::string> problems;
      on_every_rank(spec, batch, [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
        sim::SimImplementation sim;
        for (std::size_t m = 0; m < shards.size(); ++m) {
          const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
          const ShardLayout& lay = shards[m].layout;
          for (HeadKind kind : {HeadKind::query, HeadKind::kv}) {
            Tensor global(DType::f32, {lay.rows, lay.padded_len, heads.of(kind), 2});
            for (std::int64_t i = 0; i < global.numel(); ++i) global.set(i, static_cast<double>(i));
            const Tensor local = reference::select_rank(part, global, 1, ctx.rank);
            const Tensor out = sim.ulysses_all_to_all(ctx.comm, lay, local, heads, kind);
            const Tensor back = sim.ulysses_all_to_all_inverse(ctx.comm, lay, out, heads, kind);
            const bool split =
                out == reference::ulysses_head_split(global, heads, kind, cp, ctx.rank);
            if (!split || !(back == local)) {
              std::lock_guard<std::mutex> lock(mutex);
              problems.push_back(fmt::format(
                  "rank {} microbatch {} H={} H_kv={} kind {}: {}", ctx.rank, m, heads.query,
                  heads.kv, static_cast<int>(kind), split ? "inverse differs" : "split differs"));
            }
          }
        }
      });
      EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, UlyssesLayouts, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

// The error of a query all-to-all on four ranks of a plain layout, 8 tokens; `local_len` is ℓ.
std::string error_on_four_ranks(const UlyssesHeads& heads, std::int64_t local_heads,
                                std::int64_t* local_len = nullptr) {
  sim::SimImplementation impl;
  sim::World world(4);
  return error_of([&] {
    world.run([&](sim::RankContext& ctx) {
      sim::Sharder sharder(impl, ctx.comm, spec_for(testsupport::a_plain_layout(), 4));
      sharder.shard(bshd_batch(1, 8));
      if (local_len != nullptr && ctx.rank == 0) *local_len = sharder.layout().local_len();
      sharder.ulysses_all_to_all(Tensor(DType::f32, {1, 2, local_heads, 1}), heads,
                                 HeadKind::query);
    });
  });
}

TEST(Ulysses, refuses_heads_the_group_cannot_split) {
  std::string message = error_on_four_ranks({.query = 6, .kv = 6}, 6);
  EXPECT_NE(message.find("H = 6 query heads do not split over U = 4"), std::string::npos)
      << message;
  message = error_on_four_ranks({.query = 12, .kv = 3}, 12);
  EXPECT_NE(message.find("H_kv = 3 KV heads neither split over U = 4"), std::string::npos)
      << message;
  std::int64_t local_len = -1;
  message = error_on_four_ranks({.query = 8, .kv = 8}, 5, &local_len);
  EXPECT_NE(message.find(fmt::format("expected [B, ℓ, H, d] = [1, {}, 8, d]", local_len)),
            std::string::npos)
      << message;
}

TEST(Ulysses, refuses_verbs_before_the_first_shard) {
  for (const sim::LayoutDescriptor& descriptor : sim::layout_descriptors()) {
    if (descriptor.cp_off) continue;
    const std::string layout = descriptor.name;
    sim::SimImplementation impl;
    sim::World world(2);
    const std::string message = error_of([&] {
      world.run([&](sim::RankContext& ctx) {
        sim::Sharder sharder(impl, ctx.comm, spec_for(layout, 2));
        sharder.ulysses_all_to_all(Tensor(DType::f32, {1, 4, 2, 1}), {.query = 2, .kv = 2},
                                   HeadKind::query);
      });
    });
    EXPECT_FALSE(message.empty()) << layout;
  }
}

}  // namespace
}  // namespace cplab::simtest
