// stripe (SPEC §3.6, by construction): D = C·g, the stream cut into stripes of g slots, stripe j
// held by rank j mod C, in ascending order (g = 1: rank r holds every slot x ≡ r (mod C)). Packed
// rows keep their documents whole in the stream (at their caller offsets, padding at the end), as
// contiguous does; at C = 1 it is the identity.
#include "layouts/stripe.hpp"

#include "core/layout_name.hpp"
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
  const std::int64_t width = layouts::stripe_granularity.of(spec);
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(stripe), row_stream::ceil_to(caller.len, spec.cp * width), pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  // Every stripe of g slots dealt out round robin; g recorded as the map's scalar.
  row_stream::assign_round_robin(row, width);
  row.map.unit = width;
  return row;
}

}  // namespace

extern const LayoutInfo stripe_layout;
const LayoutInfo stripe_layout{.name = CPLAB_LAYOUT_NAME(stripe), .plan_row = plan_stripe_row};

}  // namespace cplab::reference
