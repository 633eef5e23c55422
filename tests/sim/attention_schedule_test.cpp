// CP attention schedules (SPEC §13): the causal pair count, the refusals of every layout and
// algorithm, and, for every layout and algorithm on small rows, every pair the mask allows
// computed exactly once (counted pair by pair through block_pair_visible). Each layout's worked
// schedules live in its own file (tests/sim/layouts/ID_test.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "attention/block_mask.hpp"
#include "attention/schedule.hpp"
#include "attention/schedule_blocks.hpp"
#include "core/error.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"
#include "tests/sim/schedule_fixtures.hpp"

namespace cplab::sim {
namespace {

using namespace schedule_test;

TEST(AttentionSchedule, CausalPairsMatchesCounting) {
  for (std::int64_t n = 0; n < 7; ++n) {
    for (std::int64_t m = 0; m < 7; ++m) {
      for (std::int64_t d = -9; d < 9; ++d) {
        std::int64_t count = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t j = 0; j < m; ++j)
            count += block_pair_visible(kMaskCausal, d, i, j, {}, {}, {});
        }
        EXPECT_EQ(causal_pairs(n, m, d), count) << n << "x" << m << " diagonal " << d;
      }
    }
  }
}

// Every registered layout at C = 2 (C = 4 for usp's ring degree), every algorithm: a layout's own
// refusal (its descriptor's refuses_algo, or usp without a ring_degree) is the schedule's, named,
// and build_schedule throws it;
// an algorithm the layout runs refuses only what the algorithm itself cannot split (H = 3 over a
// Ulysses group of 2, H_kv = 3 that does not share H = 8, a ring degree that does not divide C).
TEST(AttentionSchedule, RefusalsSayWhy) {
  const AttentionShape odd{.heads = 3, .kv_heads = 1, .head_dim = 8, .dtype = DType::bf16};
  const AttentionShape gqa{.heads = 8, .kv_heads = 3, .head_dim = 8, .dtype = DType::bf16};
  int own_refusals = 0, ulysses_runs = 0, ring_runs = 0, usp_runs = 0;
  for (const LayoutDescriptor& layout : layout_descriptors()) {
    if (layout.cp_off) continue;
    const LayoutSpec spec = spec_of(layout.name, 2);
    for (AttentionAlgo algo : all_algos()) {
      const std::string what = fmt::format("{} {}", layout.name, algo_name(algo));
      const char* own =
          layout.attention.refuses_algo != nullptr ? layout.attention.refuses_algo(algo) : nullptr;
      // A layout whose ranks are no rings of Ulysses groups refuses usp (its ring_degree).
      if ((own == nullptr || *own == '\0') && algo == AttentionAlgo::usp && !has_rings(layout))
        own = kUspAlgoNeedsUspLayout;
      if (own != nullptr && *own != '\0') {
        ++own_refusals;
        EXPECT_EQ(schedule_refusal(layout, spec, algo, {}),
                  fmt::format("{} refuses {}: {}", layout.name, algo_name(algo), own))
            << what;
        EXPECT_THROW(schedule_of(spec, causal_row(spec, 8), algo), Error) << what;
        continue;
      }
      EXPECT_NE(schedule_refusal(layout, spec, algo, gqa), "") << what;
      if (algo == AttentionAlgo::ulysses) {
        ++ulysses_runs;
        EXPECT_NE(schedule_refusal(layout, spec, algo, odd).find("H=3"), std::string::npos) << what;
      }
      if (algo == AttentionAlgo::ring) {
        ++ring_runs;
        EXPECT_EQ(schedule_refusal(layout, spec, algo, odd), "") << what;
      }
      if (algo == AttentionAlgo::usp) {
        ++usp_runs;
        EXPECT_NE(schedule_refusal(layout, spec_of(layout.name, 4, 3), algo, {}), "") << what;
        EXPECT_EQ(schedule_refusal(layout, spec_of(layout.name, 4, 2), algo, {}), "") << what;
      }
    }
  }
  EXPECT_GE(own_refusals, 1) << "no layout refuses an algorithm: the refusal went unchecked";
  EXPECT_GE(ulysses_runs, 1);
  EXPECT_GE(ring_runs, 1);
  EXPECT_GE(usp_runs, 1);
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
          rows.push_back(packed_row(spec, docs));
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
                  const TokenFacts& qf = s.facts[static_cast<std::size_t>(qs)];
                  for (std::int64_t j = b.k.begin; j < b.k.end; ++j) {
                    const std::int64_t ks = s.slot_at(rank.keys, j);
                    const TokenFacts& kf = s.facts[static_cast<std::size_t>(ks)];
                    if (!block_pair_visible(static_cast<int>(b.mask), b.diagonal, i - b.q.begin,
                                            j - b.k.begin, qf, kf, s.mask.rule()))
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
      const SlotFacts facts = slot_facts(s.doc_ids, s.real, s.facts, s.mask.rule());
      for (const ScheduleStep& step : s.steps) {
        for (const RankStep& rank : step.ranks) {
          const std::int64_t counted =
              count_step_blocks(desc.attention.blocking, s.buffer_slots(rank.queries),
                                s.buffer_slots(rank.keys), facts);
          if (desc.attention.blocking == AttentionBlocking::runs) {
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
