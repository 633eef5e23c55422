// stripe (SPEC §3 style, by construction): D = C, rank r holds every global slot g with
// g ≡ r (mod C), in ascending order. Packed rows keep their documents whole in the stream (at their
// caller offsets, padding at the end), as contiguous does; at C = 1 it is the identity.
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

RowPlan plan_stripe_row(const LayoutSpec& spec, std::int64_t caller_len,
                        const std::vector<std::int64_t>* seq_lens,
                        const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t len = row_stream::resolve_padded_len(
      "stripe", row_stream::ceil_to(caller.len, spec.cp), pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  // Every slot dealt out round-robin.
  row_stream::assign_round_robin(row, 1);
  return row;
}

}  // namespace

extern const LayoutInfo stripe_layout;
const LayoutInfo stripe_layout{.name = "stripe", .plan_row = plan_stripe_row};

}  // namespace cplab::reference
