// What a caller may ask of usp: its ring degree R (U = C/R).
#include "layouts/usp.hpp"

#include "common/limits.hpp"

namespace cplab::layouts {

const LayoutOption usp_ring_degree{
    .name = "ring_degree",
    .key = "R",
    .flag = "--ring-degree",
    .help = "usp: ring degree R (U = C/R Ulysses degree; R must divide C)",
    .what = "usp ring degree R",
    .fallback = 1,
    .most = [](std::int64_t) { return limits::kMaxCp; },
    .case_order = 1,
    // Every R dividing C: the shards' length alone does not tell them apart.
    .candidates =
        [](std::int64_t cp, std::int64_t) {
          std::vector<std::int64_t> out = {1};
          for (std::int64_t r = 2; r <= cp; ++r) {
            if (cp % r == 0) out.push_back(r);
          }
          return out;
        },
};

namespace {
const LayoutOption* const options[] = {&usp_ring_degree};
}  // namespace

extern const LayoutDeclaration usp_declaration;
const LayoutDeclaration usp_declaration{.name = "usp", .options = options};

}  // namespace cplab::layouts
