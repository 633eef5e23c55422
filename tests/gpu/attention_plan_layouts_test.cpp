// The GPU path's plans of real schedules (sim::build_schedule) for every layout, C in {1, 2, 3, 4}
// and the algorithms it runs (ring, all-gather), on the CPU: each rank's step, planned over the
// shards the device path holds at that step, keeps the pairs the schedule counts, over all ranks
// and steps the planned pairs are the document-causal mask of the row, each pair once, and the
// bytes the device ring moves per step are the ones the schedule counts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "gpu/host/attention_plan.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/usp.hpp"
#include "reference/plan.hpp"

namespace cplab::gputest {
namespace {

using namespace cplab::gpu;  // the plan under test
using sim::AttentionAlgo;

std::vector<RowPlan> rows_for(const sim::LayoutDescriptor& layout, const LayoutSpec& spec) {
  std::vector<RowPlan> rows;
  const std::int64_t cp = spec.cp;
  for (std::int64_t len : {8 * cp, 8 * cp + 3}) {
    try {
      if (layout.bshd_rows) rows.push_back(reference::plan_row(spec, len));
    } catch (const Error&) {  // a length the layout refuses
    }
  }
  for (std::vector<std::int64_t> docs :
       {std::vector<std::int64_t>{5, 3, 8 * cp}, std::vector<std::int64_t>{4 * cp, 4 * cp}}) {
    std::int64_t total = 0;
    for (std::int64_t d : docs) total += d;
    try {
      rows.push_back(reference::plan_row(spec, total, &docs));
    } catch (const Error&) {
    }
  }
  return rows;
}

TEST(AttentionPlanLayouts, every_planned_pair_is_the_rows_mask_once) {
  const sim::AttentionShape shape{.heads = 4, .kv_heads = 2, .head_dim = 8, .dtype = DType::bf16};
  std::int64_t planned = 0, ulysses_planned = 0;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : {1, 2, 3, 4}) {
      if (layout.cp_off && cp > 1) continue;
      LayoutSpec spec;
      spec.layout = layout.name;
      spec.cp = cp;
      layouts::usp_ring_degree.set(spec, cp % 2 == 0 ? 2 : 1);
      for (const RowPlan& row : rows_for(layout, spec)) {
        for (AttentionAlgo algo :
             {AttentionAlgo::ring, AttentionAlgo::all_gather, AttentionAlgo::ulysses}) {
          if (!sim::schedule_refusal(layout, spec, algo, shape).empty()) continue;
          const std::string what =
              fmt::format("{} C={} L={} {}", layout.name, cp, row.padded_len, sim::algo_name(algo));
          const std::vector<sim::AttentionSchedule> rows{
              sim::build_schedule(layout, spec, row, algo, shape)};
          const sim::AttentionSchedule& s = rows.front();
          const std::vector<sim::TokenFacts> facts = token_facts(rows);
          if (algo == AttentionAlgo::ring) {
            // What the device ring moves per step, by the schedule's own count: K/V forward, K/V
            // and f32 dK/dV backward, the delivery to the owners on the last step.
            const RingStepBytes moved =
                ring_step_bytes(s.local_len(), shape.kv_heads, shape.head_dim, shape.dtype);
            for (std::size_t t = 0; t < s.steps.size(); ++t) {
              const bool last = t + 1 == s.steps.size();
              for (const sim::RankStep& rs : s.steps[t].ranks) {
                EXPECT_EQ(rs.bytes_sent, t == 0 ? 0 : moved.forward) << what << " step " << t;
                EXPECT_EQ(rs.backward_bytes_sent,
                          (t == 0 ? 0 : moved.backward) + (last && cp > 1 ? moved.delivery : 0))
                    << what << " step " << t;
              }
            }
          }
          std::map<std::pair<std::int64_t, std::int64_t>, int> seen;
          for (std::int64_t r = 0; r < cp; ++r) {
            for (std::size_t step = 0; step < s.steps.size(); ++step) {
              // The ring holds the shard of the rank `step` places before it; all-gather, all.
              // Ulysses: every rank holds the whole sequence in global order, queries too.
              const bool ulysses = algo == AttentionAlgo::ulysses;
              const HeldKeys held =
                  algo == AttentionAlgo::ring
                      ? HeldKeys::one(cp, (r - static_cast<std::int64_t>(step) + cp) % cp, 1,
                                      s.local_len())
                  : ulysses ? HeldKeys::sequence(cp, 1, s.local_len())
                            : HeldKeys::all(cp, 1, s.local_len());
              const StepLaunch l =
                  plan_step(rows, step, r, held, kAttnTile, ulysses ? &held : nullptr);
              if (ulysses) {
                // The held sequence in global order: a position's row is its slot.
                for (const AttnPosition& p : l.queries) EXPECT_EQ(p.token, p.fact) << what;
                for (const AttnPosition& p : l.keys) EXPECT_EQ(p.token, p.fact) << what;
              }
              ASSERT_EQ(launch_pairs(l, facts, rows.front().mask.rule()), l.pairs)
                  << what << " rank " << r;
              for (const AttnBlock& b : l.blocks)
                for (std::int64_t i = 0; i < b.q_len; ++i) {
                  const auto& qf = facts[static_cast<std::size_t>(
                      l.queries[static_cast<std::size_t>(b.q_begin + i)].fact)];
                  for (std::int64_t j = 0; j < b.k_len; ++j) {
                    const auto& kf = facts[static_cast<std::size_t>(
                        l.keys[static_cast<std::size_t>(b.k_begin + j)].fact)];
                    if (sim::block_pair_visible(b.mask, b.diagonal, i, j, qf, kf,
                                                rows.front().mask.rule()))
                      ++seen[{qf.slot, kf.slot}];
                  }
                }
            }
          }
          // Ulysses ranks split heads, not pairs: each computes every pair on its own heads.
          const int copies = algo == AttentionAlgo::ulysses ? static_cast<int>(cp) : 1;
          std::int64_t allowed = 0;
          for (std::int64_t g = 0; g < s.padded_len; ++g)
            for (std::int64_t h = 0; h <= g; ++h) {
              const auto gi = static_cast<std::size_t>(g), hi = static_cast<std::size_t>(h);
              if (!s.real[gi] || !s.real[hi] || s.doc_ids[gi] != s.doc_ids[hi]) continue;
              ++allowed;
              const auto it = seen.find({g, h});
              ASSERT_TRUE(it != seen.end() && it->second == copies)
                  << what << ": pair (" << g << ", " << h << ") planned "
                  << (it == seen.end() ? 0 : it->second) << " times";
            }
          ASSERT_EQ(static_cast<std::int64_t>(seen.size()), allowed)
              << what << ": pairs outside the mask";
          ++planned;
          ulysses_planned += algo == AttentionAlgo::ulysses;
        }
      }
    }
  }
  EXPECT_GT(planned, 40);
  EXPECT_GT(ulysses_planned, 5);
}

}  // namespace
}  // namespace cplab::gputest
