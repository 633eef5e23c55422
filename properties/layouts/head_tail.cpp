// head-tail (torch context_parallel round-robin, Megatron zigzag): D = 2C, rank r holds chunk r
// then chunk 2C-1-r. It takes packed rows too, as one stream (no document boundary rule, SPEC §9
// ex. 7). Balance: equal work on a causal row without padding.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

namespace {

// SPEC §13.4: on one causal row without padding, the zigzag ring gives every rank the same work
// at every step (step 0: its own two chunks; later: half of each pairing, full).
std::string head_tail_schedule_balance(const ScheduleBalanceFacts& f) {
  if (f.schedule.algo != sim::AttentionAlgo::ring || f.row.packed ||
      f.row.caller_len != f.row.padded_len)
    return {};
  const std::string unequal = steps_of_unequal_work(f.schedule);
  return unequal.empty() ? unequal
                         : fmt::format("head-tail ring on an unpadded causal row of L={}: {}",
                                       f.row.padded_len, unequal);
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> head_tail_mutants();  // head_tail_mutants.cpp
}  // namespace mutants

extern const LayoutEntry head_tail_entry;
const LayoutEntry head_tail_entry{
    .name = CPLAB_LAYOUT_NAME(head_tail),
    .balance =
        [](const BalanceFacts& f) {
          const bool equal = std::all_of(f.work.begin(), f.work.end(),
                                         [&](std::int64_t w) { return w == f.work.front(); });
          if (!f.row.packed && f.row.caller_len == f.row.padded_len && !equal) {
            return fmt::format(
                "head-tail on an unpadded causal row of L={} gives unequal work [{}]",
                f.row.padded_len, fmt::join(f.work, ", "));
          }
          return std::string{};
        },
    .schedule_balance = head_tail_schedule_balance,
    // The shared mutants whose bug lies on this layout's code path (the hunt runs them here).
    .carries_mutants =
        {
            "attention_backward_against_first_kv",
            "attention_causal_mask_on_full_block",
            "attention_dkv_delivered_early",
            "attention_dkv_delivered_late",
            "attention_backward_ring_reversed",
            "attention_lse_merge_unstable",
            "gather_without_reorder",
        },
    .own_mutants = mutants::head_tail_mutants,
};

}  // namespace cplab::properties
