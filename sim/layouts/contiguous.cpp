// contiguous (model-owned, SPEC §3): D = C·m, rank r holds [r·ℓ, (r+1)·ℓ); packed rows keep their
// documents whole at their caller offsets.
#include "reference/types/error.hpp"
#include "sim/layouts/closed_forms.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {

extern const LayoutDescriptor contiguous_descriptor;
const LayoutDescriptor contiguous_descriptor{
    .name = "contiguous",
    .form = index_math::form_of<index_math::ContiguousMap>(),
    .pad_unit = [](const LayoutSpec& spec) { return spec.cp * spec.pad_multiple; },
    .check_spec =
        [](const LayoutSpec& spec) {
          CPLAB_CHECK(spec.pad_multiple >= 1, "pad multiple must be at least 1, got {}",
                      spec.pad_multiple);
        },
    .refuses_algo = [](AttentionAlgo algo) -> const char* {
      return algo == AttentionAlgo::usp ? kUspAlgoNeedsUspLayout : nullptr;
    },
};

}  // namespace cplab::sim
