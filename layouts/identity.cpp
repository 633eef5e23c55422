// What a caller may ask of identity: its name; it has no options beyond C.
//
// identity (CP off, SPEC §3): one rank holds the caller row as it is, L = S, nothing padded.
#include "core/layout_name.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration identity_declaration;
const LayoutDeclaration identity_declaration{.name = CPLAB_LAYOUT_NAME(identity), .options = {}};

}  // namespace cplab::layouts

namespace cplab::sim {

extern const LayoutDescriptor identity_descriptor;
const LayoutDescriptor identity_descriptor{
    .name = CPLAB_LAYOUT_NAME(identity),
    .map = {.form = index_math::form_of<index_math::ContiguousMap>(),
            .source = MapSource::shape,
            .derive = nullptr,
            .prepare = nullptr},
    .cp_off = true,
    .padding = {.unit = [](const LayoutSpec&) -> std::int64_t { return 1; },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
};

}  // namespace cplab::sim
