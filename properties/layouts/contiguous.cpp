// contiguous (Mistral-Large-4 / DeepSeek-V4 style): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ).
#include "properties/layouts/closed_forms.hpp"

namespace cplab::properties {

extern const LayoutEntry contiguous_entry;
const LayoutEntry contiguous_entry{
    .name = "contiguous",
    .closed_form = contiguous_closed_form,
    .bshd_rows = true,
    .packed_rows = true,
    .uses_pad_multiple = true,
    .balance = BalanceRule::reported,
    .pad_unit = [](const LayoutSpec& spec) { return spec.cp * spec.pad_multiple; },
};

}  // namespace cplab::properties
