// identity (CP off, SPEC §3): one rank holds the caller row as it is, L = S, nothing padded.
#include "sim/layouts/closed_forms.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {

extern const LayoutDescriptor identity_descriptor;
const LayoutDescriptor identity_descriptor{
    .name = "identity",
    .form = index_math::form_of<index_math::ContiguousMap>(),
    .cp_off = true,
    .pad_unit = [](const LayoutSpec&) -> std::int64_t { return 1; },
};

}  // namespace cplab::sim
