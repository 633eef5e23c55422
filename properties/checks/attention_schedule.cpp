// Properties 12 and 13: CP attention schedules (SPEC §13), the schedule alone, built from the
// reference's rows for every algorithm the layout runs. 12: under the case's mask (drawn, SPEC
// §13.5), over all steps every (query, key) pair the mask allows is computed on exactly H heads,
// by no rank twice, and no other pair is computed, each block realised through block_pair_visible
// on its buffers' slots, pair by pair; every block's pair count and every rank's work is what it
// computes. 13 (under the causal mask):
// the critical path Σ_s max_r work against total/C: generic identities (Ulysses gives every
// rank the same work, all-gather gives each rank its SPEC §8 causal work, the total is the mask's
// pairs on H heads) and each layout's own promise (its properties/layouts/ entry, SPEC §13.4).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

#include "attention/block_mask.hpp"
#include "properties/checks/attention_masks.hpp"
#include "properties/checks/checks.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

// The case's heads, a pure function of its seed and C: H = 2C query heads (divisible by every
// Ulysses degree C/R), and KV heads C or 1 (1: repeated up to U, SPEC §10.5).
sim::AttentionShape shape_for(const Case& c) {
  const std::uint64_t pick = mix(c.seed, 0x5c4ed, static_cast<std::uint64_t>(c.spec.cp), 0);
  return {.heads = 2 * c.spec.cp,
          .kv_heads = (pick & 1) != 0 ? 1 : c.spec.cp,
          .head_dim = 8,
          .dtype = DType::bf16};
}

// Every schedule of a row: one per algorithm the layout runs at this spec and shape, under the
// case's drawn mask when `masked` (else the causal one).
template <typename Check>
std::string each_schedule(const Case& c, CheckNotes& notes, bool masked, const Check& check) {
  const Subject subject(c);
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(c.spec.layout);
  const sim::AttentionShape shape = shape_for(c);
  const sim::AttentionMask mask =
      masked && !subject.plan.rows.empty()
          ? draw_mask(c, subject.plan.rows.front().padded_len / c.spec.cp, 12)
          : sim::AttentionMask{};
  if (masked) notes.options.push_back(mask_option(mask.family));
  for (std::size_t b = 0; b < subject.plan.rows.size(); ++b) {
    const RowPlan& row = subject.plan.rows[b];
    for (sim::AttentionAlgo algo : sim::all_algos()) {
      if (!sim::schedule_refusal(layout, c.spec, algo, shape).empty()) continue;
      // A row whose schedule passes cplab's bounds on one schedule (SPEC §13.2: a magi row of
      // one-slot chunks at C = 64 runs millions of blocks) is refused as bad input everywhere, so
      // it is no case of this algorithm; the tag counts how often the generators draw one.
      std::optional<sim::AttentionSchedule> built;
      try {
        built = sim::build_schedule(layout, c.spec, row, algo, shape, mask);
      } catch (const sim::ScheduleTooLarge&) {
        notes.tags.push_back(
            fmt::format("{} {} past the schedule bounds", c.spec.layout, sim::algo_name(algo)));
        continue;
      }
      notes.tags.push_back(
          fmt::format("{} {} {}", c.spec.layout, sim::algo_name(algo), cp_class(c.spec.cp)));
      const sim::AttentionSchedule& s = *built;
      const std::string bad = check(s, row);
      if (!bad.empty())
        return failure_prefix(c) + fmt::format("row {} {} (H={}, H_kv={}, mask {}): {}", b,
                                               sim::algo_name(algo), shape.heads, shape.kv_heads,
                                               sim::mask_text(mask), bad);
    }
  }
  return {};
}

std::string coverage_mismatch(const sim::AttentionSchedule& s, const RowPlan& row) {
  const auto len = static_cast<std::size_t>(row.padded_len);
  std::vector<std::int64_t> heads(len * len, 0);
  // Which rank last computed each pair: the ranks' steps are walked rank by rank, so a pair that
  // one rank computes twice finds its own rank there (C up to cplab's limit, no bit per rank).
  std::vector<std::int32_t> last_rank(len * len, -1);
  std::vector<std::pair<std::size_t, const sim::RankStep*>> rank_steps;  // (step, rank's part)
  for (std::size_t t = 0; t < s.steps.size(); ++t)
    for (const sim::RankStep& rank : s.steps[t].ranks) rank_steps.emplace_back(t, &rank);
  std::stable_sort(rank_steps.begin(), rank_steps.end(),
                   [](const auto& a, const auto& b) { return a.second->rank < b.second->rank; });
  std::int64_t total = 0;
  const sim::MaskRule rule = s.mask.rule();
  for (const auto& [t, rank_step] : rank_steps) {
    const sim::RankStep& rank = *rank_step;
    const std::vector<std::int64_t> qs = s.buffer_slots(rank.queries);
    const std::vector<std::int64_t> ks = s.buffer_slots(rank.keys);
    std::int64_t work = 0;
    for (const sim::ScheduleBlock& blk : rank.blocks) {
      std::int64_t pairs = 0;
      for (std::int64_t i = blk.q.begin; i < blk.q.end; ++i) {
        const std::int64_t q = qs[static_cast<std::size_t>(i)];
        const sim::TokenFacts& qf = s.facts[static_cast<std::size_t>(q)];
        for (std::int64_t j = blk.k.begin; j < blk.k.end; ++j) {
          const std::int64_t k = ks[static_cast<std::size_t>(j)];
          const sim::TokenFacts& kf = s.facts[static_cast<std::size_t>(k)];
          if (!sim::block_pair_visible(static_cast<int>(blk.mask), blk.diagonal, i - blk.q.begin,
                                       j - blk.k.begin, qf, kf, rule))
            continue;
          const std::size_t at = static_cast<std::size_t>(q) * len + static_cast<std::size_t>(k);
          if (last_rank[at] == rank.rank)
            return fmt::format("step {} rank {} computes query slot {} × key slot {} again", t,
                               rank.rank, q, k);
          last_rank[at] = static_cast<std::int32_t>(rank.rank);
          heads[at] += rank.heads;
          ++pairs;
        }
      }
      if (pairs != blk.pairs)
        return fmt::format("step {} rank {}: a {} block claims {} pairs, computes {}", t, rank.rank,
                           sim::mask_name(blk.mask), blk.pairs, pairs);
      work += pairs * rank.heads;
    }
    if (work != rank.work)
      return fmt::format("step {} rank {}: work {}, its blocks compute {}", t, rank.rank, rank.work,
                         work);
    total += work;
  }
  if (total != s.total_work)
    return fmt::format("total work {}, the ranks compute {}", s.total_work, total);
  for (std::size_t q = 0; q < len; ++q) {
    for (std::size_t k = 0; k < len; ++k) {
      const bool allowed = sim::mask_visible(rule, s.facts[q], s.facts[k]);
      const std::int64_t want = allowed ? s.shape.heads : 0, got = heads[q * len + k];
      if (got != want)
        return fmt::format("query slot {} × key slot {} ({}) computed on {} heads, expected {}", q,
                           k, allowed ? "allowed" : "masked", got, want);
    }
  }
  return {};
}

std::string check_coverage(const Case& c, Implementation&, CheckNotes& notes) {
  return each_schedule(c, notes, true, coverage_mismatch);
}

std::string balance_mismatch(const Case& c, const sim::AttentionSchedule& s, const RowPlan& row,
                             CheckNotes& notes) {
  std::int64_t critical = 0, total = 0;
  for (const sim::ScheduleStep& step : s.steps) {
    std::int64_t most = 0;
    for (const sim::RankStep& rank : step.ranks) {
      most = std::max(most, rank.work);
      total += rank.work;
    }
    critical += most;
  }
  if (critical != s.critical_path || total != s.total_work)
    return fmt::format("critical path {} and total {}, the steps give {} and {}", s.critical_path,
                       s.total_work, critical, total);
  const std::vector<std::int64_t> causal = reference::causal_work(row);
  const std::int64_t mask_pairs = std::accumulate(causal.begin(), causal.end(), std::int64_t{0});
  if (total != mask_pairs * s.shape.heads)
    return fmt::format("total work {}, the mask's {} pairs on {} heads are {}", total, mask_pairs,
                       s.shape.heads, mask_pairs * s.shape.heads);
  if (s.algo == sim::AttentionAlgo::ulysses && critical * s.cp != total)
    return fmt::format(
        "Ulysses: every rank computes every pair on its heads, yet the critical "
        "path {} × C={} is not the total {}",
        critical, s.cp, total);
  if (s.algo == sim::AttentionAlgo::all_gather) {
    for (std::size_t r = 0; r < causal.size(); ++r) {
      const std::int64_t work = s.steps.front().ranks[r].work;
      if (work != causal[r] * s.shape.heads)
        return fmt::format("all-gather: rank {} works {}, its causal work (SPEC §8) {} × H={}", r,
                           work, causal[r], s.shape.heads);
    }
  }
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  if (entry.schedule_balance != nullptr) {
    const ScheduleBalanceFacts facts{.spec = c.spec, .row = row, .schedule = s, .tags = notes.tags};
    const std::string broken = entry.schedule_balance(facts);
    if (!broken.empty()) return broken;
  }
  notes.notes.push_back(fmt::format("{}: critical path {} / ideal {:.1f} = {:.4f}",
                                    sim::algo_name(s.algo), critical, s.ideal,
                                    s.ideal > 0 ? static_cast<double>(critical) / s.ideal : 1.0));
  return {};
}

std::string check_balance(const Case& c, Implementation&, CheckNotes& notes) {
  return each_schedule(c, notes, false, [&](const sim::AttentionSchedule& s, const RowPlan& row) {
    return balance_mismatch(c, s, row, notes);
  });
}

}  // namespace

std::string steps_of_unequal_work(const sim::AttentionSchedule& s) {
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    std::vector<std::int64_t> work;
    for (const sim::RankStep& rank : s.steps[t].ranks) work.push_back(rank.work);
    if (std::adjacent_find(work.begin(), work.end(), std::not_equal_to<>()) != work.end())
      return fmt::format("step {} gives the ranks unequal work [{}]", t, fmt::join(work, ", "));
  }
  return {};
}

// Both properties check the schedule builder alone, which no implementation under test takes part
// in: their jobs run on the twin, and every other implementation's are skipped saying so.
std::string schedule_only(const Implementation& impl) {
  if (impl.name() == "sim") return {};
  return "checks the attention schedule alone, the same for every implementation (its sim jobs "
         "run it)";
}

extern const PropertyInfo schedule_coverage_property;
const PropertyInfo schedule_coverage_property{
    .name = "ring_schedule_covers_mask_once",
    .invariant =
        "every attention schedule the layout runs computes each pair the "
        "case's mask allows exactly once per head and no other pair",
    .check = check_coverage,
    .coverage = {{kAnyCase, {}, Cross::cp},
                 {"mask causal", {}, Cross::none, true},
                 {"mask window", {}, Cross::none, true},
                 {"mask chunked", {}, Cross::none, true},
                 {"mask bidirectional", {}, Cross::none, true}},
    .unsupported = schedule_only,
};

extern const PropertyInfo schedule_balance_property;
const PropertyInfo schedule_balance_property{
    .name = "attention_critical_path_is_balanced",
    .invariant =
        "each schedule's critical path against total/C: Ulysses exact, all-gather the "
        "causal work, and each layout's per-step promise (a zigzag layout's equal ring steps)",
    .check = check_balance,
    .coverage = {{kAnyCase, {}, Cross::cp}},
    .unsupported = schedule_only,
};

}  // namespace cplab::properties
