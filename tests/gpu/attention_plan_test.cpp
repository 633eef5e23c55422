// The host side of CP attention on the device (gpu/host/attention_plan.hpp), on the CPU: the
// positions and facts every buffer position resolves to, the tiles a launch covers, the merge
// lists, the refusals of a schedule that does not match what the rank holds, and the bytes.
#include "gpu/host/attention_plan.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "hand_schedules.hpp"

namespace cplab::gputest {
namespace {

using sim::AttentionAlgo;
using namespace cplab::gpu;  // the plan under test

std::vector<sim::AttentionSchedule> rows_of(AttentionAlgo algo, std::int64_t cp, std::int64_t local,
                                            HandMasks masks, std::int64_t rows = 2) {
  std::vector<sim::AttentionSchedule> out;
  for (std::int64_t b = 0; b < rows; ++b)
    out.push_back(hand_schedule(algo, cp, local, {3 + b, 2 * local, 1}, masks, {4, 2, 8}));
  return out;
}

void expect_throws_with(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << part << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(AttentionPlan, ring_step_reads_the_held_shard_and_the_rows_own_facts) {
  const std::int64_t cp = 3, local = 5, rank = 1;
  const auto rows = rows_of(AttentionAlgo::ring, cp, local, HandMasks::doc_causal);
  for (std::size_t step = 0; step < 3; ++step) {
    const std::int64_t from = (rank - static_cast<std::int64_t>(step) + cp) % cp;
    const StepLaunch l = plan_step(rows, step, rank, HeldKeys::one(cp, from, 2, local));
    ASSERT_EQ(l.queries.size(), 10u);
    ASSERT_EQ(l.keys.size(), 10u);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t k = 0; k < local; ++k) {
        const auto at = static_cast<std::size_t>(b * local + k);
        // Queries: the rank's own row b; keys: row b of the one held shard.
        EXPECT_EQ(l.queries[at].token, b * local + k);
        EXPECT_EQ(l.queries[at].fact, b * cp * local + rank * local + k);
        EXPECT_EQ(l.keys[at].token, b * local + k);
        EXPECT_EQ(l.keys[at].fact, b * cp * local + from * local + k);
      }
    ASSERT_EQ(l.blocks.size(), 2u);  // one per row
    EXPECT_EQ(l.blocks[1].q_begin, local);
    EXPECT_EQ(l.blocks[1].k_begin, local);
    EXPECT_EQ(l.blocks[1].out_begin, local);
    EXPECT_EQ(l.blocks[1].row, 1);
    EXPECT_EQ(l.out_rows, 2 * local);
  }
}

TEST(AttentionPlan, all_gather_keys_are_rank_major_in_the_gathered_array) {
  const std::int64_t cp = 4, local = 3, rows = 2;
  const HeldKeys held = HeldKeys::all(cp, rows, local);
  EXPECT_EQ(held.shards(), cp);
  const auto schedules = rows_of(AttentionAlgo::all_gather, cp, local, HandMasks::doc_causal);
  const StepLaunch l = plan_step(schedules, 0, 2, held);
  ASSERT_EQ(l.keys.size(), static_cast<std::size_t>(rows * cp * local));
  std::size_t at = 0;
  for (std::int64_t b = 0; b < rows; ++b)
    for (std::int64_t r = 0; r < cp; ++r)
      for (std::int64_t k = 0; k < local; ++k, ++at) {
        EXPECT_EQ(l.keys[at].token, (r * rows + b) * local + k);
        EXPECT_EQ(l.keys[at].fact, b * cp * local + r * local + k);
      }
}

TEST(AttentionPlan, resolved_positions_keep_the_pairs_the_schedule_counts) {
  for (HandMasks masks : {HandMasks::doc_causal, HandMasks::causal, HandMasks::split_keys})
    for (AttentionAlgo algo : {AttentionAlgo::ring, AttentionAlgo::all_gather})
      for (std::int64_t cp : {1, 2, 3, 5}) {
        const std::int64_t local = 7;
        std::vector<sim::AttentionSchedule> rows;
        for (std::int64_t b = 0; b < 2; ++b)
          rows.push_back(masks == HandMasks::causal
                             ? hand_schedule(algo, cp, local, {cp * local}, masks, {2, 1, 4})
                             : hand_schedule(algo, cp, local, {4 + b, 9, 2, 30}, masks, {2, 1, 4}));
        const auto facts = token_facts(rows);
        ASSERT_EQ(facts.size(), static_cast<std::size_t>(2 * cp * local));
        for (std::int64_t r = 0; r < cp; ++r)
          for (std::size_t step = 0; step < rows[0].steps.size(); ++step) {
            const HeldKeys held =
                algo == AttentionAlgo::ring
                    ? HeldKeys::one(cp, rows[0].steps[step].ranks[r].kv_from, 2, local)
                    : HeldKeys::all(cp, 2, local);
            const StepLaunch l = plan_step(rows, step, r, held);
            std::int64_t counted = 0;
            for (const auto& row : rows)
              for (const auto& b : row.steps[step].ranks[r].blocks) counted += b.pairs;
            EXPECT_EQ(l.pairs, counted);
            EXPECT_EQ(launch_pairs(l, facts, rows.front().mask.rule()), counted)
                << "masks " << static_cast<int>(masks) << " C=" << cp << " rank " << r << " step "
                << step;
          }
      }
}

TEST(AttentionPlan, tiles_cover_every_block_row_once_in_block_order) {
  std::vector<AttnBlock> blocks(3);
  blocks[0].q_len = 130;
  blocks[0].k_len = 1;
  blocks[1].q_len = 5;
  blocks[1].k_len = 64;
  blocks[2].q_len = 64;
  blocks[2].k_len = 65;
  const auto q = block_tiles(blocks, false, 64);
  const std::vector<AttnTile> want{{0, 0, 64}, {0, 64, 64}, {0, 128, 2}, {1, 0, 5}, {2, 0, 64}};
  EXPECT_EQ(q, want);
  const auto k = block_tiles(blocks, true, 64);
  const std::vector<AttnTile> want_k{{0, 0, 1}, {1, 0, 64}, {2, 0, 64}, {2, 64, 1}};
  EXPECT_EQ(k, want_k);
  for (std::int64_t tile : {1, 3, 64, 200}) {
    std::map<std::pair<std::int64_t, std::int64_t>, int> seen;
    for (const AttnTile& t : block_tiles(blocks, false, tile)) {
      EXPECT_GE(t.len, 1);
      EXPECT_LE(t.len, tile);
      for (std::int64_t i = t.begin; i < t.begin + t.len; ++i) ++seen[{t.block, i}];
    }
    std::size_t rows = 0;
    for (const auto& b : blocks) rows += static_cast<std::size_t>(b.q_len);
    EXPECT_EQ(seen.size(), rows);
    for (const auto& [at, n] : seen) EXPECT_EQ(n, 1) << at.first << "," << at.second;
  }
  expect_throws_with([&] { block_tiles(blocks, false, 0); }, "tile of 0 rows");
}

TEST(AttentionPlan, blocks_sharing_queries_merge_in_block_order) {
  const std::int64_t cp = 2, local = 6;
  const auto rows = rows_of(AttentionAlgo::ring, cp, local, HandMasks::split_keys, 1);
  const StepLaunch l = plan_step(rows, 0, 0, HeldKeys::one(cp, 0, 1, local));
  ASSERT_EQ(l.blocks.size(), 2u);
  EXPECT_EQ(l.out_rows, 2 * local);
  ASSERT_EQ(l.merge_tokens.size(), static_cast<std::size_t>(local));
  ASSERT_EQ(l.merge_offsets.size(), l.merge_tokens.size() + 1);
  for (std::int64_t t = 0; t < local; ++t) {
    const auto i = static_cast<std::size_t>(t);
    EXPECT_EQ(l.merge_tokens[i], t);
    ASSERT_EQ(l.merge_offsets[i + 1] - l.merge_offsets[i], 2);
    // Query t's output rows: its row in block 0, then its row in block 1.
    EXPECT_EQ(l.merge_rows[static_cast<std::size_t>(l.merge_offsets[i])], t);
    EXPECT_EQ(l.merge_rows[static_cast<std::size_t>(l.merge_offsets[i]) + 1], local + t);
  }
}

TEST(AttentionPlan, a_step_with_no_blocks_merges_nothing) {
  const std::int64_t cp = 3, local = 4;
  const auto rows = rows_of(AttentionAlgo::ring, cp, local, HandMasks::causal, 1);
  // Rank 0 at step 1 holds rank 2's keys: all in its future.
  const StepLaunch l = plan_step(rows, 1, 0, HeldKeys::one(cp, 2, 1, local));
  EXPECT_TRUE(l.blocks.empty());
  EXPECT_TRUE(l.query_tiles.empty());
  EXPECT_TRUE(l.merge_tokens.empty());
  EXPECT_EQ(l.merge_offsets, std::vector<std::int64_t>{0});
}

TEST(AttentionPlan, refuses_a_schedule_that_reads_what_the_rank_does_not_hold) {
  const std::int64_t cp = 3, local = 4;
  auto rows = rows_of(AttentionAlgo::ring, cp, local, HandMasks::doc_causal);
  // Step 1: rank 1 holds rank 0's shard, not its own.
  expect_throws_with([&] { plan_step(rows, 1, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "reads keys of rank 0, whose shard this rank does not hold");
  auto bad = rows;
  bad[1].steps[0].ranks[1].queries[0].rank = 2;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "the query buffer has a piece of rank 2");
  bad = rows;
  bad[0].steps[0].ranks[1].keys[0].local.end = local + 1;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "is outside the shards");
  bad = rows;
  bad[0].steps[0].ranks[1].blocks[0].k.end = local + 1;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "leaves its buffers");
  bad = rows;
  bad[0].steps[0].ranks[1].blocks[0].q.end = bad[0].steps[0].ranks[1].blocks[0].q.begin;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); }, "is empty");
  bad = rows;
  bad[0].steps[0].ranks[1].blocks[0].mask = sim::MaskKind::skip;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "a block masked 3");
  bad = rows;
  bad[1].steps.pop_back();
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "row 1 has C = 3, L = 12 and 2 steps");
  bad = rows;
  bad[0].index[2][1] = 99;
  expect_throws_with([&] { plan_step(bad, 0, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "index map slot 99 outside [0, 12)");
  expect_throws_with([&] { plan_step(rows, 0, 1, HeldKeys::one(cp, 1, 3, local)); },
                     "held keys of 3 rows");
  expect_throws_with([&] { plan_step(rows, 3, 1, HeldKeys::one(cp, 1, 2, local)); },
                     "no step 3 for rank 1");
}

TEST(AttentionPlan, a_step_is_checked_against_the_shard_the_ring_moved_in) {
  const std::int64_t cp = 3, local = 4;
  auto rows = rows_of(AttentionAlgo::ring, cp, local, HandMasks::doc_causal);
  // The ring: rank r holds rank (r - step) mod C's shard.
  for (std::int64_t r = 0; r < cp; ++r)
    for (std::size_t step = 0; step < 3; ++step)
      check_step_source(rows, step, r, {step == 0 ? sim::Exchange::none : sim::Exchange::send_recv},
                        (r - static_cast<std::int64_t>(step) + cp) % cp, 4);
  expect_throws_with([&] { check_step_source(rows, 1, 1, {sim::Exchange::send_recv}, 1, 4); },
                     "the schedule has rank 1 hold the K/V of 0, but the rank holds those of 1");
  expect_throws_with([&] { check_step_source(rows, 1, 1, {sim::Exchange::all_gather}, 0, 4); },
                     "row 0 step 1 is brought by send_recv; this step moves K/V by all_gather");
  expect_throws_with([&] { check_step_source(rows, 0, 2, {sim::Exchange::none}, 2, 8); },
                     "compute 4 heads; the tensors have H = 8");
  // Steps swapped in one row only: the other rows' agreement does not hide it.
  std::swap(rows[1].steps[1], rows[1].steps[2]);
  expect_throws_with([&] { check_step_source(rows, 1, 0, {sim::Exchange::send_recv}, 2, 4); },
                     "row 1 step 1");
  expect_throws_with([&] { check_step_source(rows, 3, 0, {sim::Exchange::send_recv}, 2, 4); },
                     "row 0 has no step 3");
}

TEST(AttentionPlan, token_facts_are_each_rows_documents_by_slot) {
  const auto rows = rows_of(AttentionAlgo::ring, 2, 4, HandMasks::doc_causal);
  const auto facts = token_facts(rows);
  ASSERT_EQ(facts.size(), 16u);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t g = 0; g < 8; ++g) {
      const auto& f = facts[b * 8 + g];
      EXPECT_EQ(f.slot, static_cast<std::int64_t>(g));
      EXPECT_EQ(f.doc, rows[b].doc_ids[g]);
      EXPECT_EQ(f.real, rows[b].real[g]);
    }
  // Row 0: documents of 3, 8 and 1 tokens, then padding; row 1: 4, 8.
  EXPECT_EQ(facts[3].doc, 2);
  EXPECT_EQ(facts[8 + 3].doc, 1);
}

TEST(AttentionPlan, ring_step_bytes_are_kv_forward_and_f32_gradients_backward) {
  const RingStepBytes bf = ring_step_bytes(10, 2, 8, DType::bf16);
  EXPECT_EQ(bf.forward, 2 * 10 * 2 * 8 * 2);
  EXPECT_EQ(bf.backward, 2 * 10 * 2 * 8 * 2 + 2 * 10 * 2 * 8 * 4);
  EXPECT_EQ(bf.delivery, 2 * 10 * 2 * 8 * 4);
  const RingStepBytes f = ring_step_bytes(10, 2, 8, DType::f32);
  EXPECT_EQ(f.backward, 2 * f.forward);
}

TEST(AttentionPlan, held_keys_refuse_a_rank_outside_the_group) {
  expect_throws_with([] { HeldKeys::one(2, 2, 1, 4); }, "rank 2 outside a group of 2");
  const HeldKeys h = HeldKeys::one(3, 2, 1, 4);
  EXPECT_TRUE(h.holds(2));
  EXPECT_FALSE(h.holds(0));
  EXPECT_FALSE(h.holds(3));
  EXPECT_FALSE(h.holds(-1));
  EXPECT_EQ(h.shards(), 1);
  EXPECT_EQ(h.token(2, 0, 3, 99), 3);
  // After a head all-to-all the whole sequence is held in global order: the slot decides.
  const HeldKeys seq = HeldKeys::sequence(3, 2, 4);
  EXPECT_TRUE(seq.holds(0) && seq.holds(2));
  EXPECT_EQ(seq.tokens(), 24);
  EXPECT_EQ(seq.token(2, 1, 3, 5), 12 + 5);
}

}  // namespace
}  // namespace cplab::gputest
