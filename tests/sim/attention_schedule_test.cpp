// CP attention schedules (SPEC §13): the worked examples block by block, the zigzag rule of
// head-tail's ring, stripe's shifted diagonal, thd's document boundaries, Ulysses' buffer order,
// the refusals, and, for every layout and algorithm on small rows, every pair the mask allows
// computed exactly once (counted pair by pair through block_pair_visible).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "layouts/usp.hpp"
#include "reference/plan.hpp"
#include "reference/types/error.hpp"
#include "sim/attention/block_mask.hpp"
#include "sim/attention/schedule.hpp"
#include "sim/attention/schedule_blocks.hpp"
#include "sim/layout_descriptor.hpp"

namespace cplab::sim {
namespace {

LayoutSpec spec_of(const std::string& layout, std::int64_t cp, std::int64_t ring_degree = 1) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::usp_ring_degree.set(spec, ring_degree);
  return spec;
}

AttentionSchedule schedule_of(const LayoutSpec& spec, const RowPlan& row, AttentionAlgo algo,
                              const AttentionShape& shape = {}) {
  return build_schedule(layout_descriptor(spec.layout), spec, row, algo, shape);
}

RowPlan causal_row(const LayoutSpec& spec, std::int64_t seq_len) {
  return reference::plan_row(spec, seq_len);
}

RowPlan packed_row(const LayoutSpec& spec, std::vector<std::int64_t> docs) {
  std::int64_t total = 0;
  for (std::int64_t d : docs) total += d;
  return reference::plan_row(spec, total, &docs);
}

struct Expected {
  LocalRange q, k;
  MaskKind mask;
  std::int64_t diagonal, pairs;
};

void expect_blocks(const RankStep& rank, const std::vector<Expected>& want) {
  ASSERT_EQ(rank.blocks.size(), want.size()) << "rank " << rank.rank;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const ScheduleBlock& b = rank.blocks[i];
    EXPECT_EQ(b.q, want[i].q) << "rank " << rank.rank << " block " << i;
    EXPECT_EQ(b.k, want[i].k) << "rank " << rank.rank << " block " << i;
    EXPECT_EQ(b.mask, want[i].mask) << "rank " << rank.rank << " block " << i;
    if (b.mask == MaskKind::causal) {
      EXPECT_EQ(b.diagonal, want[i].diagonal) << "block " << i;
    }
    EXPECT_EQ(b.pairs, want[i].pairs) << "rank " << rank.rank << " block " << i;
  }
}

TEST(AttentionSchedule, CausalPairsMatchesCounting) {
  for (std::int64_t n = 0; n < 7; ++n) {
    for (std::int64_t m = 0; m < 7; ++m) {
      for (std::int64_t d = -9; d < 9; ++d) {
        std::int64_t count = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t j = 0; j < m; ++j)
            count += block_pair_visible(kMaskCausal, d, i, j, {}, {});
        }
        EXPECT_EQ(causal_pairs(n, m, d), count) << n << "x" << m << " diagonal " << d;
      }
    }
  }
}

// SPEC §13.2's example: head-tail C = 2, L = 8 (chunks of 2): rank 0 holds [0,1,6,7], rank 1
// [2,3,4,5] (chunks 1 and 2 meet: one run).
TEST(AttentionSchedule, HeadTailRingAtTwoRanks) {
  const LayoutSpec spec = spec_of("head-tail", 2);
  const AttentionShape shape{.heads = 2, .kv_heads = 1, .head_dim = 4, .dtype = DType::bf16};
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 8), AttentionAlgo::ring, shape);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].exchange, "none");
  EXPECT_EQ(s.steps[1].exchange, "send_recv");
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
                                     j - b.k.begin, {}, {}))
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

// Stripe (whole buffers): rank r's local i is slot i·C + r and a source's key j is j·C + src, so
// the key is at or before the query iff j <= i + floor((r - src) / C): diagonal 0 for a source at
// or before the rank, -1 after it.
TEST(AttentionSchedule, StripeRingHasTheShiftedDiagonal) {
  const LayoutSpec spec = spec_of("stripe", 2);
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 8), AttentionAlgo::ring);
  expect_blocks(s.steps[0].ranks[0], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  expect_blocks(s.steps[0].ranks[1], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  expect_blocks(s.steps[1].ranks[0], {{{0, 4}, {0, 4}, MaskKind::causal, -1, 6}});
  expect_blocks(s.steps[1].ranks[1], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  // A padded row: the ranks holding a pad read per-token facts.
  const AttentionSchedule padded = schedule_of(spec, causal_row(spec, 7), AttentionAlgo::ring);
  EXPECT_EQ(padded.steps[0].ranks[0].blocks[0].mask, MaskKind::causal);
  EXPECT_EQ(padded.steps[0].ranks[1].blocks[0].mask, MaskKind::doc_causal);
  EXPECT_EQ(padded.steps[0].ranks[1].blocks[0].pairs, 6);  // slots 1, 3, 5 (7 is the pad)
}

// thd, documents 4 and 8 at C = 2: rank 0 holds [0] [3] of document 1 and [4,5] [10,11] of
// document 2; slots 3 and 4 meet but belong to two documents, so no block crosses them.
TEST(AttentionSchedule, ThdRespectsDocumentBoundaries) {
  const LayoutSpec spec = spec_of("thd", 2);
  const RowPlan row = packed_row(spec, {4, 8});
  ASSERT_EQ(row.index[0], (std::vector<std::int64_t>{0, 3, 4, 5, 10, 11}));
  const AttentionSchedule s = schedule_of(spec, row, AttentionAlgo::ring);
  // A single query and key, the key at or before it: full.
  expect_blocks(s.steps[0].ranks[0], {{{0, 1}, {0, 1}, MaskKind::full, 0, 1},
                                      {{1, 2}, {0, 1}, MaskKind::full, 0, 1},
                                      {{1, 2}, {1, 2}, MaskKind::full, 0, 1},
                                      {{2, 4}, {2, 4}, MaskKind::causal, 0, 3},
                                      {{4, 6}, {2, 4}, MaskKind::full, 0, 4},
                                      {{4, 6}, {4, 6}, MaskKind::causal, 0, 3}});
  std::int64_t pairs = 0;
  for (const ScheduleStep& step : s.steps)
    for (const RankStep& rank : step.ranks)
      for (const ScheduleBlock& b : rank.blocks) pairs += b.pairs;
  EXPECT_EQ(pairs, 4 * 5 / 2 + 8 * 9 / 2);
  for (const ScheduleStep& step : s.steps) EXPECT_EQ(step.ranks[0].work, step.ranks[1].work);
}

// Ulysses on head-tail, C = 2, S = 37 (L = 40, chunks of 10): the buffers are the shards in rank
// order, as SeqAllToAll4D concatenates them: slots [0..9, 30..39, 10..29].
TEST(AttentionSchedule, UlyssesBuffersAreShardsInRankOrder) {
  const LayoutSpec spec = spec_of("head-tail", 2);
  const AttentionShape shape{.heads = 4, .kv_heads = 1, .head_dim = 8, .dtype = DType::bf16};
  const AttentionSchedule s =
      schedule_of(spec, causal_row(spec, 37), AttentionAlgo::ulysses, shape);
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].exchange, "all_to_all");
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

TEST(AttentionSchedule, UspRingsOverUlyssesGroups) {
  const LayoutSpec spec = spec_of("usp", 4, 2);
  const AttentionShape shape{.heads = 4, .kv_heads = 2, .head_dim = 8, .dtype = DType::bf16};
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 32), AttentionAlgo::usp, shape);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].exchange, "all_to_all");
  EXPECT_EQ(s.steps[1].exchange, "send_recv");
  EXPECT_EQ(s.ring_degree, 2);
  EXPECT_EQ(s.ulysses_degree, 2);
  const RankStep& r3 = s.steps[1].ranks[3];  // ring rank 1 holds group 0's keys at step 1
  EXPECT_EQ(r3.queries, (std::vector<BufferPiece>{{2, {0, 8}}, {3, {0, 8}}}));
  EXPECT_EQ(r3.keys, (std::vector<BufferPiece>{{0, {0, 8}}, {1, {0, 8}}}));
  EXPECT_EQ(r3.heads, 2);
  for (const ScheduleStep& step : s.steps)
    for (const RankStep& rank : step.ranks) EXPECT_EQ(rank.work, step.ranks[0].work);
}

TEST(AttentionSchedule, RefusalsSayWhy) {
  const AttentionShape odd{.heads = 3, .kv_heads = 1, .head_dim = 8, .dtype = DType::bf16};
  EXPECT_NE(schedule_refusal(layout_descriptor("head-tail"), spec_of("head-tail", 2),
                             AttentionAlgo::ulysses, odd)
                .find("H=3"),
            std::string::npos);
  EXPECT_EQ(schedule_refusal(layout_descriptor("head-tail"), spec_of("head-tail", 2),
                             AttentionAlgo::ring, odd),
            "");
  EXPECT_NE(schedule_refusal(layout_descriptor("head-tail"), spec_of("head-tail", 2),
                             AttentionAlgo::usp, {}),
            "");
  EXPECT_NE(
      schedule_refusal(layout_descriptor("magi"), spec_of("magi", 2), AttentionAlgo::ring, {}), "");
  EXPECT_NE(
      schedule_refusal(layout_descriptor("usp"), spec_of("usp", 4, 3), AttentionAlgo::usp, {}), "");
  EXPECT_EQ(
      schedule_refusal(layout_descriptor("usp"), spec_of("usp", 4, 2), AttentionAlgo::usp, {}), "");
  const AttentionShape gqa{.heads = 8, .kv_heads = 3, .head_dim = 8, .dtype = DType::bf16};
  EXPECT_NE(schedule_refusal(layout_descriptor("contiguous"), spec_of("contiguous", 2),
                             AttentionAlgo::ring, gqa),
            "");
  const LayoutSpec spec = spec_of("head-tail", 2);
  EXPECT_THROW(schedule_of(spec, causal_row(spec, 8), AttentionAlgo::usp), Error);
}

// Every layout, C, algorithm it runs and a few rows: over all steps each (query, key) pair the
// global document-causal mask allows is computed on exactly H heads, by no rank twice, and no
// other pair is computed; every block's pair count and every rank's work is what it computes.
TEST(AttentionSchedule, EveryScheduleCoversTheMaskOnce) {
  const AttentionShape shape{.heads = 12, .kv_heads = 12, .head_dim = 2, .dtype = DType::f32};
  for (const LayoutDescriptor& layout : layout_descriptors()) {
    for (std::int64_t cp : {1, 2, 3, 4}) {
      if (layout.cp_off && cp > 1) continue;
      const LayoutSpec spec = spec_of(layout.name, cp, cp % 2 == 0 ? 2 : 1);
      std::vector<RowPlan> rows;
      for (std::int64_t len : {8 * cp, 8 * cp + 3}) {
        try {
          if (layout.bshd_rows) rows.push_back(causal_row(spec, len));
        } catch (const Error&) {  // a length the layout refuses
        }
      }
      for (const std::vector<std::int64_t>& docs :
           {std::vector<std::int64_t>{5, 3, 8 * cp}, std::vector<std::int64_t>{4 * cp, 4 * cp}}) {
        try {
          if (layout.packed_rows) rows.push_back(packed_row(spec, docs));
        } catch (const Error&) {
        }
      }
      for (const RowPlan& row : rows) {
        for (AttentionAlgo algo : all_algos()) {
          if (!schedule_refusal(layout, spec, algo, shape).empty()) continue;
          const std::string what =
              fmt::format("{} C={} L={} {}", layout.name, cp, row.padded_len, algo_name(algo));
          const AttentionSchedule s = build_schedule(layout, spec, row, algo, shape);
          const auto len = static_cast<std::size_t>(row.padded_len);
          std::vector<std::int64_t> heads(len * len, 0);
          std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int> by_rank;
          std::int64_t total = 0;
          for (const ScheduleStep& step : s.steps) {
            for (const RankStep& rank : step.ranks) {
              std::int64_t work = 0;
              for (const ScheduleBlock& b : rank.blocks) {
                std::int64_t pairs = 0;
                for (std::int64_t i = b.q.begin; i < b.q.end; ++i) {
                  const std::int64_t qs = s.slot_at(rank.queries, i);
                  const TokenFacts qf{qs, s.doc_ids[qs], s.real[qs]};
                  for (std::int64_t j = b.k.begin; j < b.k.end; ++j) {
                    const std::int64_t ks = s.slot_at(rank.keys, j);
                    const TokenFacts kf{ks, s.doc_ids[ks], s.real[ks]};
                    if (!block_pair_visible(static_cast<int>(b.mask), b.diagonal, i - b.q.begin,
                                            j - b.k.begin, qf, kf))
                      continue;
                    ++pairs;
                    heads[qs * len + ks] += rank.heads;
                    ASSERT_EQ(++by_rank[std::make_tuple(rank.rank, qs, ks)], 1)
                        << what << " rank " << rank.rank;
                  }
                }
                ASSERT_EQ(pairs, b.pairs) << what;
                work += pairs * rank.heads;
              }
              ASSERT_EQ(work, rank.work) << what;
              total += work;
            }
          }
          ASSERT_EQ(total, s.total_work) << what;
          for (std::size_t q = 0; q < len; ++q) {
            for (std::size_t k = 0; k < len; ++k) {
              const bool allowed =
                  row.real[q] && row.real[k] && row.doc_ids[q] == row.doc_ids[k] && k <= q;
              ASSERT_EQ(heads[q * len + k], allowed ? shape.heads : 0)
                  << what << ": query slot " << q << ", key slot " << k;
            }
          }
        }
      }
    }
  }
}

// The count the builder refuses by (kMaxScheduleBlocks) is the count it stores, rank step by rank
// step, so that a schedule past the bound is refused before it holds a block. Every layout that
// lays out this packed row at C = 4 (some refuse it: CP off, or the padding is the caller's).
TEST(AttentionSchedule, CountedBlocksAreTheStoredOnes) {
  int layouts_tried = 0;
  for (const std::string& layout : layout_descriptor_names()) {
    const LayoutSpec spec = spec_of(layout, 4);
    RowPlan row;
    try {
      row = packed_row(spec, {37, 5, 1, 80});
    } catch (const Error&) {
      continue;
    }
    ++layouts_tried;
    for (AttentionAlgo algo :
         {AttentionAlgo::all_gather, AttentionAlgo::ring, AttentionAlgo::ulysses}) {
      const LayoutDescriptor& desc = layout_descriptor(layout);
      if (!schedule_refusal(desc, spec, algo, {}).empty()) continue;
      const AttentionSchedule s = schedule_of(spec, row, algo);
      const SlotFacts facts = slot_facts(s.doc_ids, s.real);
      for (const ScheduleStep& step : s.steps) {
        for (const RankStep& rank : step.ranks) {
          const std::int64_t counted =
              count_step_blocks(desc.attention_blocking, s.buffer_slots(rank.queries),
                                s.buffer_slots(rank.keys), facts);
          if (desc.attention_blocking == AttentionBlocking::runs) {
            EXPECT_EQ(counted, static_cast<std::int64_t>(rank.blocks.size()))
                << layout << " " << algo_name(algo) << " rank " << rank.rank;
          } else {
            EXPECT_GE(counted, static_cast<std::int64_t>(rank.blocks.size())) << layout;
          }
        }
      }
    }
  }
  EXPECT_GE(layouts_tried, 6) << "too few layouts took the packed row";
}

}  // namespace
}  // namespace cplab::sim
