#include "python/layout_options.hpp"

#include "check/shard_check.hpp"
#include "reference/plan.hpp"
#include "reference/types/error.hpp"

namespace cplab::python {

LayoutSpec make_spec(const std::string& layout, std::int64_t cp, const LayoutOptions& options) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  if (options.pad_multiple) spec.pad_multiple = *options.pad_multiple;
  if (options.chunk_size) spec.chunk_size = *options.chunk_size;
  if (options.ring_degree) spec.ring_degree = *options.ring_degree;
  if (options.block_size) spec.block_size = *options.block_size;
  if (options.pad_id) spec.pad_token_id = *options.pad_id;
  spec.chunk_pad_at_cp1 = options.chunk_pad_at_cp1;
  if (options.pad_policy) spec.pad_policy = check::parse_pad_policy(*options.pad_policy);
  validate_spec(spec);
  return spec;
}

ShardPlan plan_rows(const LayoutSpec& spec, const RowShape& shape, std::int64_t rows) {
  CPLAB_CHECK(shape.seq_len.has_value() != shape.doc_lens.has_value(),
              "give seq_len= (a BSHD row) or doc_lens= (a packed row), not {}",
              shape.seq_len ? "both" : "neither");
  CPLAB_CHECK(!shape.doc_lens_padded || shape.doc_lens,
              "doc_lens_padded= goes with doc_lens= (a packed row)");
  CPLAB_CHECK(rows >= 1, "a plan needs at least one row, got {}", rows);
  ShardPlan plan;
  plan.spec = spec;
  RowPlan row;
  if (shape.seq_len) {
    row = reference::plan_row(spec, *shape.seq_len);
  } else {
    std::int64_t occupied = 0;
    const auto& lens = shape.doc_lens_padded ? *shape.doc_lens_padded : *shape.doc_lens;
    for (std::int64_t n : lens) {
      CPLAB_CHECK(n >= 0, "document lengths must be non-negative, got {}", n);
      occupied += n;
    }
    row = reference::plan_row(spec, occupied, &*shape.doc_lens,
                              shape.doc_lens_padded ? &*shape.doc_lens_padded : nullptr);
  }
  plan.rows.assign(static_cast<std::size_t>(rows), row);
  return plan;
}

ShardPlan plan_batch(const LayoutSpec& spec, const Batch& batch) {
  CPLAB_CHECK(!batch.packed() || batch.rows() == 1,
              "a packed batch of {} rows: give one packed row at a time (each row of a packed "
              "batch is planned on its own and may have its own padded length)",
              batch.rows());
  return reference::plan(spec, batch);
}

}  // namespace cplab::python
