// stripe: D = C, rank r holds the slots g ≡ r (mod C). Balance: on an unpadded causal BSHD row of
// L = C·ℓ, rank r's queries are slots k·C + r, each seeing k·C + r + 1 keys, so its work is
// C·ℓ(ℓ-1)/2 + ℓ(r+1): nearly even, the last rank ℓ(C-1) above the first. Elsewhere: reported.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

std::string stripe_balance(const BalanceFacts& f) {
  const std::int64_t cp = f.spec.cp, local = f.row.padded_len / cp;
  if (!f.row.packed && f.row.caller_len == f.row.padded_len) {
    for (std::int64_t r = 0; r < cp; ++r) {
      const std::int64_t want = cp * local * (local - 1) / 2 + local * (r + 1);
      if (f.work[static_cast<std::size_t>(r)] != want) {
        return fmt::format(
            "stripe on an unpadded causal row of L={}: rank {} has work {}, C·ℓ(ℓ-1)/2 + ℓ(r+1) "
            "= {} (all ranks: [{}])",
            f.row.padded_len, r, f.work[static_cast<std::size_t>(r)], want,
            fmt::join(f.work, ", "));
      }
    }
    return {};
  }
  const double imbalance = reference::imbalance(f.work);
  f.tags.push_back(fmt::format("stripe imbalance {}", imbalance < 1.5 ? "<1.5" : ">=1.5"));
  return {};
}

}  // namespace

namespace {

// SPEC §13.4: on one causal row of L = C·ℓ without padding, ring step s gives rank r the keys of
// src = (r - s) mod C on a diagonal of 0 (src <= r: ℓ(ℓ+1)/2 pairs) or -1 (src > r: ℓ(ℓ-1)/2),
// so every step's busiest rank does ℓ(ℓ+1)/2 and C·critical - total = H·C·ℓ(C-1)/2 exactly.
std::string stripe_schedule_balance(const ScheduleBalanceFacts& f) {
  const sim::AttentionSchedule& s = f.schedule;
  if (s.algo != sim::AttentionAlgo::ring || f.row.packed || f.row.caller_len != f.row.padded_len)
    return {};
  const std::int64_t cp = s.cp, local = s.local_len(), heads = s.shape.heads;
  const std::int64_t want = heads * cp * local * (cp - 1) / 2;
  if (cp * s.critical_path - s.total_work != want) {
    return fmt::format(
        "stripe ring on an unpadded causal row of L={}: C·critical path - total = {}, H·C·ℓ(C-1)/2 "
        "= {}",
        f.row.padded_len, cp * s.critical_path - s.total_work, want);
  }
  return {};
}

}  // namespace

extern const LayoutEntry stripe_entry;
const LayoutEntry stripe_entry{
    .name = "stripe",
    .balance = stripe_balance,
    .schedule_balance = stripe_schedule_balance,
};

}  // namespace cplab::properties
