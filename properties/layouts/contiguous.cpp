// contiguous (Mistral-Large-4 / DeepSeek-V4 style): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ).
// Unbalanced by design: its imbalance is reported (a coverage tag), not bounded.
#include <fmt/format.h>

#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {

extern const LayoutEntry contiguous_entry;
const LayoutEntry contiguous_entry{
    .name = "contiguous",
    .uses_pad_multiple = true,
    .balance =
        [](const BalanceFacts& f) {
          const double imbalance = reference::imbalance(f.work);
          f.tags.push_back(fmt::format("{} imbalance {}", f.spec.layout,
                                       imbalance < 1.5 ? "<1.5"
                                       : imbalance < 3 ? "<3"
                                                       : ">=3"));
          return std::string{};
        },
};

}  // namespace cplab::properties
