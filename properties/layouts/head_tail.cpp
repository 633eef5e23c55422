// head-tail (torch context_parallel round-robin, Megatron zigzag): D = 2C, rank r holds chunk r
// then chunk 2C-1-r. It takes packed rows too, as one stream (no document boundary rule, SPEC §9
// ex. 7).
#include "properties/layouts/closed_forms.hpp"

namespace cplab::properties {

extern const LayoutEntry head_tail_entry;
const LayoutEntry head_tail_entry{
    .name = "head-tail",
    .closed_form =
        [](const MapParams& p) {
          if (p.cp == 1) return contiguous_closed_form(p);
          return closed_form_of(index_math::HeadTailMap{p.cp, p.padded_len});
        },
    .bshd_rows = true,
    .packed_rows = true,
    .balance = BalanceRule::equal_on_full_rows,
    .pad_unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
};

}  // namespace cplab::properties
