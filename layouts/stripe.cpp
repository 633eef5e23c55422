// What a caller may ask of stripe: its granularity g, the tokens in one stripe.
#include "layouts/stripe.hpp"

#include "layouts/divisors.hpp"

namespace cplab::layouts {

const LayoutOption stripe_granularity{
    .name = "granularity",
    .key = "g",
    .flag = "--granularity",
    .help = "stripe: stripes of g tokens dealt round robin (L is padded to a multiple of C·g)",
    .what = "stripe granularity g",
    .fallback = 1,
    .case_order = 4,
    // g divides every rank's length ℓ (L = C·ℓ is a multiple of C·g); 1 first, today's stripe.
    .candidates = [](std::int64_t, std::int64_t local) { return default_then_divisors(1, local); },
    .pad_unit = [](std::int64_t cp, std::int64_t g) { return cp * g; },
};

namespace {
const LayoutOption* const options[] = {&stripe_granularity};
}  // namespace

extern const LayoutDeclaration stripe_declaration;
const LayoutDeclaration stripe_declaration{.name = "stripe", .options = options};

}  // namespace cplab::layouts
