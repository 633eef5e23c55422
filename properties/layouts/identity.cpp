// identity (CP off): one rank holds the row as it is; nothing to balance.
#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

extern const LayoutEntry identity_entry;
const LayoutEntry identity_entry{
    .name = CPLAB_LAYOUT_NAME(identity),
    .balance = [](const BalanceFacts&) { return std::string{}; },
};

}  // namespace cplab::properties
