// identity (CP off): one rank holds the row as it is; the closed form is contiguous with C = 1.
#include "properties/layouts/closed_forms.hpp"

namespace cplab::properties {

extern const LayoutEntry identity_entry;
const LayoutEntry identity_entry{
    .name = "identity",
    .reference = nullptr,  // filled from the reference registry by name
    .closed_form = contiguous_closed_form,
    .cp_off = true,
    .bshd_rows = true,
    .packed_rows = true,
    .balance = BalanceRule::none,
    .pad_unit = [](const LayoutSpec&) -> std::int64_t { return 1; },
};

}  // namespace cplab::properties
