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

extern const LayoutEntry stripe_entry;
const LayoutEntry stripe_entry{
    .name = "stripe",
    .balance = stripe_balance,
};

}  // namespace cplab::properties
