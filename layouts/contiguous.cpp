// What a caller may ask of contiguous: its pad multiple m (D = C·m).
#include "layouts/contiguous.hpp"

namespace cplab::layouts {

const LayoutOption contiguous_pad_multiple{
    .name = "pad_multiple",
    .key = "m",
    .flag = "--pad-multiple",
    .help = "contiguous: pad multiple m (D = C·m)",
    .what = "pad multiple m",
    .fallback = 2,
    .case_order = 0,
    .candidates =
        [](std::int64_t, std::int64_t) {
          return std::vector<std::int64_t>{2, 1, 3, 4, 8};
        },
    .pad_unit = [](std::int64_t cp, std::int64_t m) { return cp * m; },
};

namespace {
const LayoutOption* const options[] = {&contiguous_pad_multiple};
}  // namespace

extern const LayoutDeclaration contiguous_declaration;
const LayoutDeclaration contiguous_declaration{.name = "contiguous", .options = options};

}  // namespace cplab::layouts
