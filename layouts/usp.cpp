// What a caller may ask of usp: its ring degree R (U = C/R).
//
// usp (yunchang unified sequence parallel, SPEC §10.4): ring degree R × Ulysses degree U = C,
// D = 2C; ring rank q holds chunks q and 2R-1-q of 2R, cut into U contiguous parts, global rank
// q·U + u holding part u. Packed rows are one stream, their documents at their caller offsets.
// Its map follows from C, L and R; R is recorded as the map's scalar so that a rank's map can be
// rebuilt (and checked) from what it recorded.
#include "layouts/usp.hpp"

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/limits.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"
#include "layouts/usp.hpp"

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
const LayoutDeclaration usp_declaration{.name = CPLAB_LAYOUT_NAME(usp), .options = options};

}  // namespace cplab::layouts

namespace cplab::sim {
namespace {

void check_ring_degree(const LayoutSpec& spec) {
  const std::int64_t ring = layouts::usp_ring_degree.of(spec);
  CPLAB_CHECK(ring >= 1 && spec.cp % ring == 0,
              "usp: ring degree R={} does not divide the CP size C={} (U = C/R)", ring, spec.cp);
}

}  // namespace

extern const LayoutDescriptor usp_descriptor;
// R rings of U = C/R Ulysses groups: its two degrees, each rank's place in them, and the rings
// the usp algorithm attends through (SPEC §13).
const RankStructure usp_ranks{
    .layout_facts =
        [](const LayoutSpec& spec) {
          const std::int64_t ring = layouts::usp_ring_degree.of(spec);
          return std::vector<NamedValue>{{"ring_degree", ring}, {"ulysses_degree", spec.cp / ring}};
        },
    .rank_facts =
        [](const LayoutSpec& spec, std::int64_t rank) {
          const std::int64_t ulysses = spec.cp / layouts::usp_ring_degree.of(spec);
          return std::vector<NamedValue>{{"ring_rank", rank / ulysses},
                                         {"ulysses_rank", rank % ulysses}};
        },
    .ring_degree = [](const LayoutSpec& spec) { return layouts::usp_ring_degree.of(spec); },
};

const LayoutDescriptor usp_descriptor{
    .name = CPLAB_LAYOUT_NAME(usp),
    .map = {.form = index_math::form_of<index_math::UspMap>(),
            .source = MapSource::recorded,
            .derive =
                [](RowStream& stream, const LayoutSpec& spec, const PartitionRules&) {
                  stream.map = {.table = {}, .unit = layouts::usp_ring_degree.of(spec)};
                },
            .prepare =
                [](std::int64_t cp, std::int64_t padded_len, const MapParams& params) {
                  CPLAB_CHECK(params.unit >= 1 && cp % params.unit == 0 && params.table.empty(),
                              "usp row map: ring degree R={} does not divide C={}", params.unit,
                              cp);
                  CPLAB_CHECK(padded_len % (2 * cp) == 0,
                              "usp row map: L={} is not a multiple of 2C={}", padded_len, 2 * cp);
                  return std::vector<std::int64_t>{};
                }},
    .padding = {.unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
    .check_spec = check_ring_degree,
    .rank_structure = &usp_ranks,
};

}  // namespace cplab::sim
