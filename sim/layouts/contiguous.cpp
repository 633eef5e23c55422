// contiguous (model-owned, SPEC §3): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ); packed rows keep their
// documents whole at their caller offsets.
#include "layouts/contiguous.hpp"

#include "sim/layouts/closed_forms.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {

extern const LayoutDescriptor contiguous_descriptor;
const LayoutDescriptor contiguous_descriptor{
    .name = "contiguous",
    .form = index_math::form_of<index_math::ContiguousMap>(),
    .pad_unit =
        [](const LayoutSpec& spec) { return spec.cp * layouts::contiguous_pad_multiple.of(spec); },
};

}  // namespace cplab::sim
