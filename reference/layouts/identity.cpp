// identity (CP off, SPEC §3): one rank holds the caller row as it is, L = S, nothing padded.
#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

RowPlan plan_identity_row(const LayoutSpec& spec, std::int64_t caller_len,
                          const std::vector<std::int64_t>* seq_lens,
                          const std::vector<std::int64_t>* seq_lens_padded,
                          std::int64_t pinned_len) {
  // Replicating the row on C > 1 ranks would break "the ranks' index maps form a permutation of
  // [0, L)", so the identity layout exists only with CP off.
  CPLAB_CHECK(spec.cp == 1, "the identity layout is CP off: it needs cp=1, got cp={}", spec.cp);
  return row_stream::identity_plan(
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded), pinned_len);
}

}  // namespace

extern const LayoutInfo identity_layout;
const LayoutInfo identity_layout{.name = CPLAB_LAYOUT_NAME(identity),
                                 .plan_row = plan_identity_row};

}  // namespace cplab::reference
