// What a caller may ask of head-tail: its name; it has no options beyond C.
//
// head-tail (torch context_parallel round-robin, Megatron zigzag, SPEC §3): D = 2C, rank r holds
// chunk r then chunk 2C-1-r; packed rows are one stream, their documents at their caller offsets.
#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration head_tail_declaration;
const LayoutDeclaration head_tail_declaration{.name = CPLAB_LAYOUT_NAME(head_tail), .options = {}};

}  // namespace cplab::layouts

namespace cplab::sim {

extern const LayoutDescriptor head_tail_descriptor;
const LayoutDescriptor head_tail_descriptor{
    .name = CPLAB_LAYOUT_NAME(head_tail),
    .map = {.form = index_math::form_of<index_math::HeadTailMap>(),
            .source = MapSource::shape,
            .derive = nullptr,
            .prepare =
                [](std::int64_t cp, std::int64_t padded_len, const MapParams&) {
                  CPLAB_CHECK(padded_len % (2 * cp) == 0,
                              "head-tail row map: L={} is not a multiple of 2C={}", padded_len,
                              2 * cp);
                  return std::vector<std::int64_t>{};
                }},
    .padding = {.unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
};

}  // namespace cplab::sim
