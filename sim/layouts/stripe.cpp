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
    // One block per rank step, masked by global slot: the stripes' keys and queries interleave, so
    // runs of consecutive slots would be single tokens (SPEC §13.2).
    .attention_blocking = AttentionBlocking::whole,
    .refuses_algo = [](AttentionAlgo algo) -> const char* {
      return algo == AttentionAlgo::usp ? kUspAlgoNeedsUspLayout : nullptr;
    },
};

}  // namespace cplab::sim
