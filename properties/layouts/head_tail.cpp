// head-tail (torch context_parallel round-robin, Megatron zigzag): D = 2C, rank r holds chunk r
// then chunk 2C-1-r. It takes packed rows too, as one stream (no document boundary rule, SPEC §9
// ex. 7). Balance: equal work on a causal row without padding.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "properties/layout_table.hpp"

namespace cplab::properties {

extern const LayoutEntry head_tail_entry;
const LayoutEntry head_tail_entry{
    .name = "head-tail",
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
};

}  // namespace cplab::properties
