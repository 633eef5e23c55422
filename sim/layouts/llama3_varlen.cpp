// llama3-varlen (ring-flash-attention's llama3_flash_attn_varlen): contiguous ranks over a packed
// row whose length is already a multiple of C (documents may cross rank boundaries; nothing is
// padded). Its map is contiguous's, from C and L alone; what is its own is how ranks attend: each
// through its cu_seqlens_q, cu_seqlens_k and key slice (PartitionRules::varlen_segments).
#include "sim/layouts/closed_forms.hpp"
#include "sim/partition.hpp"

namespace cplab::sim {

extern const LayoutDescriptor llama3_varlen_descriptor;
const LayoutDescriptor llama3_varlen_descriptor{
    .name = "llama3-varlen",
    .form = index_math::form_of<index_math::ContiguousMap>(),
    .bshd_rows = false,
    .pad_unit = [](const LayoutSpec& spec) { return spec.cp; },
    .row_rule = {.of = RowRule::Of::length,
                 .multiple = [](const LayoutSpec& spec) { return spec.cp; },
                 .multiple_name = "C"},
    .varlen_segments = true,
    .refuses_algo = [](AttentionAlgo algo) -> const char* {
      if (algo == AttentionAlgo::ring)
        return "llama3_flash_attn_varlen all-gathers the keys and slices them per rank; it never "
               "passes them round a ring";
      return nullptr;
    },
};

}  // namespace cplab::sim
