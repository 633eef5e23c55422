#include "reference/plan.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace cplab::reference {

RowPlan plan_row(const LayoutSpec& spec, std::int64_t caller_len,
                 const std::vector<std::int64_t>* seq_lens,
                 const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  validate_spec(spec);
  // Sizes first, overflow-safe: the layouts build the row slot by slot.
  if (seq_lens) limits::check_documents(*seq_lens, "seq_lens");
  if (seq_lens_padded) limits::check_documents(*seq_lens_padded, "seq_lens_padded");
  limits::padded_len_bound(spec, caller_len,
                           seq_lens ? static_cast<std::int64_t>(seq_lens->size()) : 0);
  return layout_info(spec.layout).plan_row(spec, caller_len, seq_lens, seq_lens_padded, pinned_len);
}

namespace {

std::vector<RowPlan> plan_packed_rows(const LayoutSpec& spec, const Batch& batch,
                                      std::int64_t seq_len) {
  std::vector<RowPlan> rows;
  for (std::size_t b = 0; b < batch.seq_lens.size(); ++b) {
    const bool has_padded = !batch.seq_lens_padded.empty() && !batch.seq_lens_padded[b].empty();
    rows.push_back(plan_row(spec, seq_len, &batch.seq_lens[b],
                            has_padded ? &batch.seq_lens_padded[b] : nullptr));
  }
  return rows;
}

}  // namespace

ShardPlan plan(const LayoutSpec& spec, const Batch& batch) {
  validate_spec(spec);
  validate_batch(batch);
  const std::int64_t rows = batch.rows();
  const std::int64_t seq_len = batch.seq_len();
  std::int64_t documents = 0;
  for (const auto& row : batch.seq_lens)
    documents = std::max(documents, static_cast<std::int64_t>(row.size()));
  const std::int64_t slots = limits::mul(rows, limits::padded_len_bound(spec, seq_len, documents),
                                         "the batch's planned slots");
  CPLAB_CHECK(slots <= limits::kMaxBatchSlots,
              "a batch of B={} rows of S={} may plan up to {} slots, more than cplab's limit of {}",
              rows, seq_len, slots, limits::kMaxBatchSlots);
  ShardPlan out{.spec = spec, .rows = {}};
  if (!batch.packed()) {
    CPLAB_CHECK(rows % spec.microbatches == 0,
                "a batch of B={} rows does not split into microbatches={} equal microbatches (rows "
                "are never dropped)",
                rows, spec.microbatches);
    // Every BSHD row has the same shape, hence the same layout.
    if (rows > 0) out.rows.assign(static_cast<std::size_t>(rows), plan_row(spec, seq_len));
    return out;
  }
  CPLAB_CHECK(
      rows == spec.microbatches,
      "packed batches hold exactly one packed row per microbatch: B={} rows for microbatches={}",
      rows, spec.microbatches);
  // Each packed row is partitioned on its own (SPEC §4): thd rows may end up with different L,
  // which the verbs accept one microbatch at a time (microbatch_plan).
  out.rows = plan_packed_rows(spec, batch, seq_len);
  return out;
}

ShardPlan microbatch_plan(const ShardPlan& plan, std::int64_t m) {
  CPLAB_CHECK(m >= 0 && m < plan.spec.microbatches,
              "microbatch {} out of range: the plan has microbatches={}", m,
              plan.spec.microbatches);
  const std::int64_t per = plan.rows_per_microbatch();
  ShardPlan out{.spec = plan.spec, .rows = {}};
  out.spec.microbatches = 1;
  out.rows.assign(plan.rows.begin() + m * per, plan.rows.begin() + (m + 1) * per);
  return out;
}

}  // namespace cplab::reference
