// stripe: D = C·g, stripes of g slots dealt round robin, stripe j to rank j mod C. Balance: on an
// unpadded causal BSHD row of L = C·ℓ, ℓ = J·g, rank r's queries are slots (t·C + r)·g + a
// (t < J, a < g), each seeing itself and every slot before it, so its work is
// C·g²·J(J-1)/2 + J·g²·r + J·g(g+1)/2: nearly even, the last rank J·g²(C-1) above the first
// (g = 1: C·ℓ(ℓ-1)/2 + ℓ(r+1)). Elsewhere: reported.
#include "layouts/stripe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;

bool unpadded_bshd(const RowPlan& row) { return !row.packed && row.caller_len == row.padded_len; }

std::string stripe_balance(const BalanceFacts& f) {
  // At C = 1 stripe is the identity whatever g: one stripe round of the whole row (g = 1).
  const I cp = f.spec.cp, g = cp == 1 ? 1 : layouts::stripe_granularity.of(f.spec);
  if (unpadded_bshd(f.row)) {
    const I runs = f.row.padded_len / cp / g;  // J
    for (I r = 0; r < cp; ++r) {
      const I want = cp * g * g * runs * (runs - 1) / 2 + runs * g * g * r + runs * g * (g + 1) / 2;
      if (f.work[static_cast<std::size_t>(r)] != want) {
        return fmt::format(
            "stripe g={} on an unpadded causal row of L={}: rank {} has work {}, "
            "C·g²·J(J-1)/2 + J·g²·r + J·g(g+1)/2 = {} (all ranks: [{}])",
            g, f.row.padded_len, r, f.work[static_cast<std::size_t>(r)], want,
            fmt::join(f.work, ", "));
      }
    }
    return {};
  }
  const double imbalance = reference::imbalance(f.work);
  f.tags.push_back(fmt::format("stripe imbalance {}", imbalance < 1.5 ? "<1.5" : ">=1.5"));
  return {};
}

// SPEC §13.4: on one causal row of L = C·ℓ without padding, ring step s gives rank r the keys of
// src = (r - s) mod C. Its queries see every key of an earlier stripe round, g² pairs per stripe
// of the same round where src < r, g(g+1)/2 where src = r and none where src > r; so every step's
// busiest rank does g²·J(J-1)/2 + J·g² (step 0: + J·g(g+1)/2 instead) and
// C·critical path - total = H·C·ℓ·g(C-1)/2 exactly.
std::string stripe_schedule_balance(const ScheduleBalanceFacts& f) {
  const sim::AttentionSchedule& s = f.schedule;
  if (s.algo != sim::AttentionAlgo::ring || !unpadded_bshd(f.row)) return {};
  const I cp = s.cp, local = s.local_len(), heads = s.shape.heads;
  const I g = layouts::stripe_granularity.of(f.spec);
  const I want = heads * cp * local * g * (cp - 1) / 2;
  if (cp * s.critical_path - s.total_work != want) {
    return fmt::format(
        "stripe g={} ring on an unpadded causal row of L={}: C·critical path - total = {}, "
        "H·C·ℓ·g(C-1)/2 = {}",
        g, f.row.padded_len, cp * s.critical_path - s.total_work, want);
  }
  return {};
}

}  // namespace

extern const LayoutEntry stripe_entry;
const LayoutEntry stripe_entry{
    .name = CPLAB_LAYOUT_NAME(stripe),
    .balance = stripe_balance,
    // g = 1 (token by token, the default) most often, now and then stripes of 2 to 4 tokens.
    .draw_options =
        [](LayoutSpec& spec, bool) {
          namespace gen = rc::gen;
          layouts::stripe_granularity.set(
              spec, *gen::weightedOneOf<I>({{3, gen::just<I>(1)}, {1, gen::inRange<I>(2, 5)}}));
        },
    .shrink_options =
        [](const LayoutSpec& spec) {
          std::vector<LayoutSpec> out;
          if (layouts::stripe_granularity.of(spec) != 1) {
            out.push_back(spec);
            layouts::stripe_granularity.reset(out.back());
          }
          return out;
        },
    .schedule_balance = stripe_schedule_balance,
    // Its schedules' whole-buffer blocks span documents: the one place a window that ignores
    // document boundaries reads another document's keys (the runs of other layouts never do).
    .carries_mutants = {"mask_window_across_documents"},
};

}  // namespace cplab::properties
