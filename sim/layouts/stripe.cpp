// stripe: D = C, rank r holds the slots g ≡ r (mod C); packed rows keep their documents whole at
// their caller offsets, the row padded at its end. Its map follows from C and L alone.
#include "sim/layouts/closed_forms.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {

extern const LayoutDescriptor stripe_descriptor;
const LayoutDescriptor stripe_descriptor{
    .name = "stripe",
    .form = index_math::form_of<index_math::StripeMap>(),
    .pad_unit = [](const LayoutSpec& spec) { return spec.cp; },
};

}  // namespace cplab::sim
