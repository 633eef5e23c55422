// head-tail (round-robin load balancing of torch context_parallel, Megatron "zigzag", SPEC §3):
// D = 2C, chunk c = L/(2C); rank r holds chunk r, then chunk 2C-1-r, so the early (cheap) and late
// (expensive) causal queries pair up and every rank gets equal work on a causal row.
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

RowPlan plan_head_tail_row(const LayoutSpec& spec, std::int64_t caller_len,
                           const std::vector<std::int64_t>* seq_lens,
                           const std::vector<std::int64_t>* seq_lens_padded,
                           std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t chunks = 2 * spec.cp;
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(head_tail), row_stream::ceil_to(caller.len, chunks), pinned_len);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);
  const std::int64_t c = len / chunks;
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    const std::int64_t tail = chunks - 1 - r;
    ranges[r] = {{r * c, (r + 1) * c}, {tail * c, (tail + 1) * c}};
  }
  row_stream::assign_ranges(row, ranges);
  return row;
}

}  // namespace

extern const LayoutInfo head_tail_layout;
const LayoutInfo head_tail_layout{.name = CPLAB_LAYOUT_NAME(head_tail),
                                  .plan_row = plan_head_tail_row};

}  // namespace cplab::reference
