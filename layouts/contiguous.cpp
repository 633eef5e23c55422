// What a caller may ask of contiguous: its pad multiple m (D = C·m).
//
// contiguous (model-owned, SPEC §3): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ); packed rows keep their
// documents whole at their caller offsets.
#include "layouts/contiguous.hpp"

#include "core/layout_name.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/contiguous.hpp"
#include "layouts/partition.hpp"

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
const LayoutDeclaration contiguous_declaration{.name = CPLAB_LAYOUT_NAME(contiguous),
                                               .options = options};

}  // namespace cplab::layouts

namespace cplab::sim {

extern const LayoutDescriptor contiguous_descriptor;
const LayoutDescriptor contiguous_descriptor{
    .name = CPLAB_LAYOUT_NAME(contiguous),
    .map = {.form = index_math::form_of<index_math::ContiguousMap>(),
            .source = MapSource::shape,
            .derive = nullptr,
            .prepare = nullptr},
    .padding = {.unit =
                    [](const LayoutSpec& spec) {
                      return spec.cp * layouts::contiguous_pad_multiple.of(spec);
                    },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
};

}  // namespace cplab::sim
