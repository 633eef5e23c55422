// What a caller may ask of ptrr: its block size B.
#include "layouts/ptrr.hpp"

#include "common/limits.hpp"
#include "layouts/divisors.hpp"

namespace cplab::layouts {

const LayoutOption ptrr_block_size{
    .name = "block_size",
    .key = "block",
    .flag = "--block-size",
    .help = "ptrr: block size B (L is padded to a multiple of B; L/B must divide by C)",
    .what = "ptrr block size B",
    .fallback = 128,
    .most = [](std::int64_t) { return limits::kMaxPadUnit; },
    .case_order = 3,
    .candidates = [](std::int64_t,
                     std::int64_t local) { return default_then_divisors(128, local); },
    .pad_unit = [](std::int64_t, std::int64_t b) { return b; },
};

namespace {
const LayoutOption* const options[] = {&ptrr_block_size};
}  // namespace

extern const LayoutDeclaration ptrr_declaration;
const LayoutDeclaration ptrr_declaration{.name = "ptrr", .options = options};

}  // namespace cplab::layouts
