// What a caller may ask of stripe: its granularity g, the tokens in one stripe.
//
// stripe: D = C·g, stripes of g slots dealt round robin, stripe j to rank j mod C; packed rows
// keep their documents whole at their caller offsets, the row padded at its end. Its map follows
// from C, L and g; g is recorded as the map's scalar so that a rank's map can be rebuilt (and
// checked) from what it recorded.
#include "layouts/stripe.hpp"

#include "core/divisors.hpp"
#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"
#include "layouts/stripe.hpp"

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
const LayoutDeclaration stripe_declaration{.name = CPLAB_LAYOUT_NAME(stripe), .options = options};

}  // namespace cplab::layouts

namespace cplab::sim {

extern const LayoutDescriptor stripe_descriptor;
const LayoutDescriptor stripe_descriptor{
    .name = CPLAB_LAYOUT_NAME(stripe),
    .map = {.form = index_math::form_of<index_math::StripeMap>(),
            .source = MapSource::recorded,
            .derive =
                [](RowStream& stream, const LayoutSpec& spec, const PartitionRules&) {
                  stream.map = {.table = {}, .unit = layouts::stripe_granularity.of(spec)};
                },
            .prepare =
                [](std::int64_t cp, std::int64_t padded_len, const MapParams& params) {
                  CPLAB_CHECK(params.unit >= 1 && params.table.empty() &&
                                  padded_len % (cp * params.unit) == 0,
                              "stripe row map: L={} is not stripes of g={} dealt over cp={} "
                              "ranks (L must be a multiple of C·g)",
                              padded_len, params.unit, cp);
                  return std::vector<std::int64_t>{};
                }},
    .padding = {.unit =
                    [](const LayoutSpec& spec) {
                      return spec.cp * layouts::stripe_granularity.of(spec);
                    },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
    // One block per rank step, masked by global slot: the stripes' keys and queries interleave, so
    // runs of consecutive slots would be single stripes (SPEC §13.2).
    .attention = {.blocking = AttentionBlocking::whole,
                  .refuses_algo = nullptr,
                  .varlen_segments = false},
};

}  // namespace cplab::sim
