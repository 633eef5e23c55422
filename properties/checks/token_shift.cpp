// shift_token_tensor (SPEC §6.1): the inputs of a multi-token prediction head of depth k, made on
// the shards. For every token key of the batch (ids, labels, masks, embeddings, mRoPE positions:
// every dtype and seq dim) and every depth 1-4, each rank's shifted shard is its slice of the
// reference's shift of the unsharded stream: the value k slots ahead in the same document, else the
// fill. The shards handed in are the reference's, so that this checks the shift and nothing before.
#include "reference/token_shift.hpp"

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

constexpr std::int64_t kDeepest = 4;

// A fill no key of the batch holds where a dtype can tell it apart: -7 (ids, labels, positions,
// embeddings), 7 in a uint8 mask; a bool mask holds both its values, so there the other keys tell.
double fill_for(DType dtype) { return dtype == DType::b8 ? 1.0 : dtype == DType::u8 ? 7.0 : -7.0; }

std::string check_microbatch(const Case& c, Implementation& impl, const Subject& subject,
                             std::int64_t m, CheckNotes& notes) {
  const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
  const Batch caller = subject.microbatch_batch(m);
  const std::int64_t cp = c.spec.cp;
  for (const auto& [key, field] : caller.tokens) {
    const Tensor global = reference::pad_to_global(plan, field);
    const double fill = fill_for(global.dtype());
    for (std::int64_t depth = 1; depth <= kDeepest; ++depth) {
      const Tensor shifted = reference::shift_global(plan, global, field.seq_dim, depth, fill);
      const auto outputs = on_ranks(cp, [&](Comm& comm, std::int64_t r) {
        return impl.shift_token_tensor(comm, reference_layout(plan, r),
                                       reference::select_rank(plan, global, field.seq_dim, r),
                                       field.seq_dim, depth, fill);
      });
      for (std::int64_t r = 0; r < cp; ++r) {
        TokenFrame frame{
            .what = fmt::format("microbatch {} {} shifted by {} on rank {}", m, key, depth, r),
            .seq_dim = field.seq_dim,
            .plan = &plan};
        for (const RowPlan& row : plan.rows)
          frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
        const std::string bad =
            tensor_mismatch(c, frame, reference::select_rank(plan, shifted, field.seq_dim, r),
                            outputs[static_cast<std::size_t>(r)]);
        if (!bad.empty()) return bad;
      }
      far_target_tag(plan, depth, notes);
    }
  }
  return {};
}

std::string check_token_shift(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const std::string bad = check_microbatch(c, impl, subject, m, notes);
    if (!bad.empty()) return failure_prefix(c) + bad;
  }
  return {};
}

std::string shift_unsupported(const Implementation& impl) { return impl.shift_unsupported(); }

}  // namespace

extern const PropertyInfo token_shift_property;
const PropertyInfo token_shift_property{
    .name = "shifted_shards_are_the_global_shift",
    .invariant =
        "for every token key and depth k of 1-4, each rank's shift_token_tensor of its shard is "
        "its slice of the unsharded stream shifted k slots within documents (the fill where no "
        "slot k ahead is in the document)",
    .check = check_token_shift,
    .coverage = {},
    .unsupported = shift_unsupported,
};

}  // namespace cplab::properties
