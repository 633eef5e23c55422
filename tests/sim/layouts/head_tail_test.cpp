// head-tail on the twin: its CP attention schedules (SPEC §13.2's example, the zigzag rule of its
// ring, Ulysses' buffers in rank order), its closed-form map's refusals and rank 1's chunks, its
// balanced causal work, and the hooks only its two-chunk map shows a bug through.
#include <gtest/gtest.h>

#include <set>

#include "attention/block_mask.hpp"
#include "core/error.hpp"
#include "layouts/cost_model.hpp"
#include "layouts/layout_map.hpp"
#include "tests/sim/checks.hpp"
#include "tests/sim/hooks_fixtures.hpp"
#include "tests/sim/schedule_fixtures.hpp"

namespace cplab::simtest {
namespace {

using sim::SimImplementation;

sim::MicrobatchRows one_row(std::int64_t len) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  return rows;
}

std::vector<std::int64_t> work_of(const std::vector<sim::RankCost>& costs) {
  std::vector<std::int64_t> work;
  for (const auto& cost : costs) work.push_back(cost.causal_work);
  return work;
}

// L = 6 divides over C = 2 ranks but not into 2C chunks.
TEST(LayoutMap, head_tail_refuses_a_length_of_no_2c_chunks) {
  EXPECT_NE(error_of([&] { sim::LayoutMap(sim::layout_descriptor("head-tail"), 2, 6); }), "");
}

TEST(LayoutMap, head_tail_rank_one_holds_the_two_middle_chunks) {
  const sim::LayoutMap map(sim::layout_descriptor("head-tail"), 2, 8);
  EXPECT_EQ(map.local_index(1), (Ints{2, 3, 4, 5}));
}

TEST(CostModelExamples, head_tail_balances_a_causal_row) {
  EXPECT_EQ(work_of(sim::rank_costs(spec_for("head-tail", 4), one_row(16))),
            (Ints{34, 34, 34, 34}));
  EXPECT_DOUBLE_EQ(sim::work_imbalance(sim::rank_costs(spec_for("head-tail", 4), one_row(16))),
                   1.0);
}

class TailChunkTwoCMinusR : public SimImplementation {
 protected:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1) return SimImplementation::local_index(stream, map, rank);
    const std::int64_t c = map.padded_len() / (2 * cp);
    Ints index;
    for (std::int64_t k = 0; k < 2 * c; ++k)
      index.push_back((k < c ? rank : (2 * cp - rank) % (2 * cp)) * c + k % c);
    return index;
  }
};

TEST(LayoutHooks, head_tail_tail_chunk_two_c_minus_r) {
  TailChunkTwoCMinusR variant;
  EXPECT_NE(check_shard_against_reference(spec_for("head-tail", 3), bshd_batch(2, 13), variant)
                .find("index map"),
            std::string::npos);
}

// head-tail: rank C-1's early chunk ends where its own tail chunk begins; this takes that target
// from its next-rank neighbour (rank 0's first token) instead. (Run on head-tail only.)
class WrongNeighbourForLastRank : public SimImplementation {
 protected:
  index_math::Slot target_owner(const sim::LayoutMap& map, std::int64_t slot, std::int64_t asking,
                                std::int64_t depth) const override {
    const index_math::Slot right = SimImplementation::target_owner(map, slot, asking, depth);
    const std::int64_t c = map.padded_len() / (2 * map.cp());
    if (map.cp() > 1 && slot == map.cp() * c) return {0, right.offset - c};
    return right;
  }
};

TEST(LossHooks, last_ranks_early_chunk_target_from_the_wrong_neighbour) {
  EXPECT_NE(loss_report<WrongNeighbourForLastRank>("head-tail", 2, dense_batch(1, 16)), "");
}

}  // namespace
}  // namespace cplab::simtest

namespace cplab::sim {
namespace {

using namespace schedule_test;

// SPEC §13.2's example: head-tail C = 2, L = 8 (chunks of 2): rank 0 holds [0,1,6,7], rank 1
// [2,3,4,5] (chunks 1 and 2 meet: one run).
TEST(AttentionSchedule, HeadTailRingAtTwoRanks) {
  const LayoutSpec spec = spec_of("head-tail", 2);
  const AttentionShape shape{.heads = 2, .kv_heads = 1, .head_dim = 4, .dtype = DType::bf16};
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 8), AttentionAlgo::ring, shape);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].exchange, sim::Exchange::none);
  EXPECT_EQ(s.steps[1].exchange, sim::Exchange::send_recv);
  const RankStep& r0 = s.steps[0].ranks[0];
  EXPECT_EQ(r0.kv_from, 0);
  expect_blocks(r0, {{{0, 2}, {0, 2}, MaskKind::causal, 0, 3},
                     {{2, 4}, {0, 2}, MaskKind::full, 0, 4},
                     {{2, 4}, {2, 4}, MaskKind::causal, 0, 3}});
  EXPECT_EQ(r0.skipped_blocks, 1);  // chunk 0's queries before chunk 3's keys
  expect_blocks(s.steps[0].ranks[1], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  const RankStep& r0s1 = s.steps[1].ranks[0];
  EXPECT_EQ(r0s1.kv_from, 1);
  expect_blocks(r0s1, {{{2, 4}, {0, 4}, MaskKind::full, 0, 8}});
  const RankStep& r1s1 = s.steps[1].ranks[1];
  EXPECT_EQ(r1s1.kv_from, 0);
  expect_blocks(r1s1, {{{0, 4}, {0, 2}, MaskKind::full, 0, 8}});
  for (const ScheduleStep& step : s.steps) {
    EXPECT_EQ(step.ranks[0].work, step.ranks[1].work);  // the zigzag promise
  }
  EXPECT_EQ(s.steps[0].ranks[0].work, 20);
  EXPECT_EQ(s.total_work, 2 * 36);
  EXPECT_EQ(s.critical_path, 36);
  EXPECT_DOUBLE_EQ(s.ideal, 36.0);
  // Bytes: K and V of ℓ = 4 tokens, 1 KV head of 4 bf16 each; backward adds dK, dV in f32 and the
  // last step delivers them to their owners.
  EXPECT_EQ(s.steps[0].ranks[0].bytes_received, 0);
  EXPECT_EQ(s.steps[0].ranks[0].backward_bytes_received, 0);
  EXPECT_EQ(s.steps[1].ranks[0].bytes_received, 2 * 4 * 4 * 2);
  EXPECT_EQ(s.steps[1].ranks[0].bytes_sent, 2 * 4 * 4 * 2);
  EXPECT_EQ(s.steps[1].ranks[0].backward_bytes_received, 2 * 4 * 4 * (2 + 4 + 4));
}

// The zigzag rule (ring-flash-attention): step 0 causal on the rank's own chunks; at step s > 0,
// a source before the rank gives all queries × the source's first chunk, a source after it the
// rank's second chunk × all the source's keys, every block full.
TEST(AttentionSchedule, HeadTailRingIsTheZigzagRule) {
  for (std::int64_t cp : {2, 3, 4, 5}) {
    const LayoutSpec spec = spec_of("head-tail", cp);
    const std::int64_t c = 3, len = 2 * cp * c;
    const AttentionSchedule s = schedule_of(spec, causal_row(spec, len), AttentionAlgo::ring);
    for (std::size_t t = 0; t < s.steps.size(); ++t) {
      for (const RankStep& rank : s.steps[t].ranks) {
        const std::int64_t r = rank.rank, src = rank.kv_from;
        std::set<std::pair<std::int64_t, std::int64_t>> got, want;
        for (const ScheduleBlock& b : rank.blocks) {
          if (t > 0) {
            EXPECT_EQ(b.mask, MaskKind::full) << "C=" << cp << " step " << t;
          }
          for (std::int64_t i = b.q.begin; i < b.q.end; ++i) {
            for (std::int64_t j = b.k.begin; j < b.k.end; ++j) {
              if (block_pair_visible(static_cast<int>(b.mask), b.diagonal, i - b.q.begin,
                                     j - b.k.begin, {}, {}, {}))
                got.insert({s.slot_at(rank.queries, i), s.slot_at(rank.keys, j)});
            }
          }
        }
        auto chunk = [&](std::int64_t x) {
          std::vector<std::int64_t> out;
          for (std::int64_t g = x * c; g < (x + 1) * c; ++g) out.push_back(g);
          return out;
        };
        auto both = [&](std::int64_t x) {
          std::vector<std::int64_t> out = chunk(x), tail = chunk(2 * cp - 1 - x);
          out.insert(out.end(), tail.begin(), tail.end());
          return out;
        };
        if (t == 0) {
          for (std::int64_t q : both(r))
            for (std::int64_t k : both(r))
              if (k <= q) want.insert({q, k});
        } else if (src < r) {
          for (std::int64_t q : both(r))
            for (std::int64_t k : chunk(src)) want.insert({q, k});
        } else {
          for (std::int64_t q : chunk(2 * cp - 1 - r))
            for (std::int64_t k : both(src)) want.insert({q, k});
        }
        EXPECT_EQ(got, want) << "C=" << cp << " step " << t << " rank " << r;
      }
    }
    EXPECT_EQ(s.critical_path * cp, s.total_work) << "C=" << cp;
  }
}

// Ulysses on head-tail, C = 2, S = 37 (L = 40, chunks of 10): the buffers are the shards in rank
// order, as SeqAllToAll4D concatenates them: slots [0..9, 30..39, 10..29].
TEST(AttentionSchedule, UlyssesBuffersAreShardsInRankOrder) {
  const LayoutSpec spec = spec_of("head-tail", 2);
  const AttentionShape shape{.heads = 4, .kv_heads = 1, .head_dim = 8, .dtype = DType::bf16};
  const AttentionSchedule s =
      schedule_of(spec, causal_row(spec, 37), AttentionAlgo::ulysses, shape);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].exchange, sim::Exchange::all_to_all);
  std::vector<std::int64_t> want;
  for (std::int64_t g = 0; g < 10; ++g) want.push_back(g);
  for (std::int64_t g = 30; g < 40; ++g) want.push_back(g);
  for (std::int64_t g = 10; g < 30; ++g) want.push_back(g);
  for (const RankStep& rank : s.steps[0].ranks) {
    EXPECT_EQ(rank.heads, 2);
    std::vector<std::int64_t> slots, keys;
    for (std::int64_t p = 0; p < 40; ++p) slots.push_back(s.slot_at(rank.queries, p));
    for (std::int64_t p = 0; p < 40; ++p) keys.push_back(s.slot_at(rank.keys, p));
    EXPECT_EQ(slots, want);
    EXPECT_EQ(keys, want);
    EXPECT_EQ(rank.work, 2 * (37 * 38 / 2));
  }
  EXPECT_EQ(s.critical_path, 2 * (37 * 38 / 2));
}

}  // namespace
}  // namespace cplab::sim
