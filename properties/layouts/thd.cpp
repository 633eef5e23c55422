// thd (TransformerEngine THD): head-tail inside every document, each padded to a multiple of 2C;
// local cu_seqlens = cu_seqlens_padded / C. Packed rows only.
#include "properties/layouts/closed_forms.hpp"

namespace cplab::properties {

extern const LayoutEntry thd_entry;
const LayoutEntry thd_entry{
    .name = "thd",
    .closed_form =
        [](const MapParams& p) {
          // At C = 1 every layout is the identity: the caller's documents are not re-laid.
          if (p.cp == 1) return contiguous_closed_form(p);
          check_thd_params(p);
          auto cu = std::make_shared<std::vector<std::int64_t>>(p.cu_seqlens_padded);
          const auto docs = static_cast<std::int64_t>(cu->size()) - 1;
          return closed_form_of(index_math::ThdMap{p.cp, cu->data(), docs}, cu);
        },
    .bshd_rows = false,
    .packed_rows = true,
    .local_documents = true,
    .balance = BalanceRule::equal_per_document,
    .pad_unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
};

}  // namespace cplab::properties
