// contiguous (Mistral-Large-4 / DeepSeek-V4 style): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ).
// Unbalanced by design: its imbalance is reported (a coverage tag), not bounded.
#include "layouts/contiguous.hpp"

#include <fmt/format.h>
#include <rapidcheck.h>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {

extern const LayoutEntry contiguous_entry;
const LayoutEntry contiguous_entry{
    .name = CPLAB_LAYOUT_NAME(contiguous),
    .balance =
        [](const BalanceFacts& f) {
          const double imbalance = reference::imbalance(f.work);
          f.tags.push_back(fmt::format("{} imbalance {}", f.spec.layout,
                                       imbalance < 1.5 ? "<1.5"
                                       : imbalance < 3 ? "<3"
                                                       : ">=3"));
          return std::string{};
        },
    // m = 2 (the default) most often, then 1, now and then 3 or 4.
    .draw_options =
        [](LayoutSpec& spec, bool) {
          using I = std::int64_t;
          namespace gen = rc::gen;
          layouts::contiguous_pad_multiple.set(
              spec, *gen::weightedOneOf<I>({{3, gen::just<I>(2)},
                                            {2, gen::just<I>(1)},
                                            {1, gen::elementOf(std::vector<I>{3, 4})}}));
        },
    // The shared mutants whose bug lies on this layout's code path (the hunt runs them here).
    .carries_mutants =
        {
            "attention_backward_against_first_kv",
            "attention_causal_mask_on_full_block",
            "attention_dkv_delivered_early",
            "attention_dkv_delivered_late",
            "attention_backward_ring_reversed",
            "attention_lse_merge_unstable",
        },
};

}  // namespace cplab::properties
