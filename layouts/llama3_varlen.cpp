// What a caller may ask of llama3-varlen: its name; it has no options beyond C.
//
// llama3-varlen (ring-flash-attention's llama3_flash_attn_varlen): contiguous ranks over a packed
// row whose length is already a multiple of C (documents may cross rank boundaries; nothing is
// padded). Its map is contiguous's, from C and L alone; what is its own is how ranks attend: each
// through its cu_seqlens_q, cu_seqlens_k and key slice (PartitionRules::varlen_segments).
#include <algorithm>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration llama3_varlen_declaration;
const LayoutDeclaration llama3_varlen_declaration{.name = CPLAB_LAYOUT_NAME(llama3_varlen),
                                                  .options = {}};

}  // namespace cplab::layouts

namespace cplab::sim {

// The standard step of PartitionRules (layouts/partition.hpp), here with the one layout whose ranks
// attend through it: torch's llama3_flash_attn_prepare_cu_seqlens for causal attention.
VarlenSegments PartitionRules::varlen_segments(const std::vector<std::int64_t>& doc_bounds,
                                               std::int64_t padded_len, std::int64_t cp,
                                               std::int64_t rank) const {
  CPLAB_CHECK(cp >= 1 && padded_len > 0 && padded_len % cp == 0 && rank >= 0 && rank < cp,
              "varlen segments: rank {} of cp={} on a stream of L={} (a multiple of C, not 0)",
              rank, cp, padded_len);
  std::vector<std::int64_t> cu = doc_bounds.empty() ? std::vector<std::int64_t>{0} : doc_bounds;
  if (cu.back() < padded_len) cu.push_back(padded_len);  // row padding: one more segment
  CPLAB_CHECK(cu.front() == 0 && cu.back() == padded_len && std::is_sorted(cu.begin(), cu.end()),
              "varlen segments: document bounds must rise from 0 to L={}", padded_len);
  const std::int64_t n = padded_len / cp, lo = rank * n, hi = lo + n;
  // searchsorted: the first bound >= lo (one back when it is not lo: the document crossing in) and
  // the first bound >= hi; cu[left..right] then bounds every document the rank's queries are in.
  auto left = static_cast<std::size_t>(std::lower_bound(cu.begin(), cu.end(), lo) - cu.begin());
  const auto right =
      static_cast<std::size_t>(std::lower_bound(cu.begin(), cu.end(), hi) - cu.begin());
  if (cu[left] != lo) --left;
  VarlenSegments s;
  for (std::size_t i = left; i <= right; ++i) {
    s.cu_seqlens_q.push_back(cu[i] - lo);
    s.cu_seqlens_k.push_back(cu[i] - cu[left]);
  }
  s.cu_seqlens_q.front() = 0;
  s.cu_seqlens_q.back() = n;
  s.k_begin = cu[left];
  s.k_end = hi;  // causal: the last key segment ends where the rank's queries end
  s.cu_seqlens_k.back() = hi - cu[left];
  return s;
}

extern const LayoutDescriptor llama3_varlen_descriptor;
const LayoutDescriptor llama3_varlen_descriptor{
    .name = CPLAB_LAYOUT_NAME(llama3_varlen),
    .map = {.form = index_math::form_of<index_math::ContiguousMap>(),
            .source = MapSource::shape,
            .derive = nullptr,
            .prepare = nullptr},
    .bshd_rows = false,
    .padding = {.unit = [](const LayoutSpec& spec) { return spec.cp; },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
    .row_rule = {.of = RowRule::Of::length,
                 .multiple = [](const LayoutSpec& spec) { return spec.cp; },
                 .multiple_name = "C"},
    .attention = {.blocking = AttentionBlocking::runs,
                  .refuses_algo = [](AttentionAlgo algo) -> const char* {
                    if (algo == AttentionAlgo::ring)
                      return "llama3_flash_attn_varlen all-gathers the keys and slices them per "
                             "rank; it never passes them round a ring";
                    return nullptr;
                  },
                  .varlen_segments = true},
};

}  // namespace cplab::sim
