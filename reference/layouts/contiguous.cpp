// contiguous (model-owned, Mistral-Large-4 / DeepSeek-V4 style, SPEC §3): D = C·m, rank r holds
// [r·ℓ, (r+1)·ℓ). Packed rows keep their documents whole in the stream; positions and document
// ids are those of the padded stream, computed before the cut.
#include "layouts/contiguous.hpp"

#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

RowPlan plan_contiguous_row(const LayoutSpec& spec, std::int64_t caller_len,
                            const std::vector<std::int64_t>* seq_lens,
                            const std::vector<std::int64_t>* seq_lens_padded,
                            std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(contiguous),
      row_stream::ceil_to(caller.len, spec.cp * layouts::contiguous_pad_multiple.of(spec)),
      pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  const std::int64_t local = len / spec.cp;
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t r = 0; r < spec.cp; ++r) ranges[r] = {{r * local, (r + 1) * local}};
  row_stream::assign_ranges(row, ranges);
  return row;
}

}  // namespace

extern const LayoutInfo contiguous_layout;
const LayoutInfo contiguous_layout{.name = CPLAB_LAYOUT_NAME(contiguous),
                                   .plan_row = plan_contiguous_row};

}  // namespace cplab::reference
