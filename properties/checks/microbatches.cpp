// Property 9 (SPEC §4): microbatches are independent (another microbatch's content never changes
// this one's shards), sharding the primary later (shard_primary = false, then
// shard_primary_later) gives exactly what shard_primary = true gives, and the same case gives the
// same shards every time.
#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// dst's rows [first, first + count) of every row-aligned key replaced by src's (shapes equal).
void splice_rows(Batch& dst, const Batch& src, std::int64_t first, std::int64_t count) {
  CPLAB_CHECK(first >= 0 && first + count <= dst.rows(), "splice of rows [{}, {}) into B={}", first,
              first + count, dst.rows());
  for (auto& [name, field] : dst.tokens) {
    const Tensor& from = src.tokens.at(name).value;
    const TokenDims dims = token_dims(field.value.shape(), field.seq_dim);
    if (dims.rows != dst.rows()) {  // a shared [1,S] row belongs to every microbatch
      field.value = from;
      continue;
    }
    for (std::int64_t o = 0; o < dims.outer; ++o) {
      for (std::int64_t b = first; b < first + count; ++b) {
        for (std::int64_t s = 0; s < dims.seq; ++s) {
          for (std::int64_t e = 0; e < dims.inner; ++e)
            field.value.set(dims.flat(o, b, s, e), from.get(dims.flat(o, b, s, e)));
        }
      }
    }
  }
}

std::string shard_difference(const RankShard& want, const RankShard& got, const std::string& at) {
  for (const auto& [name, field] : want.local.tokens) {
    if (!got.local.has(name) || !(got.local.tokens.at(name).value == field.value)) {
      return fmt::format("{}: key '{}' differs", at, name);
    }
  }
  const ShardLayout &a = want.layout, &b = got.layout;
  if (a.index != b.index || a.positions != b.positions || a.doc_ids != b.doc_ids ||
      a.real != b.real || a.cu_seqlens != b.cu_seqlens || a.padded_len != b.padded_len) {
    return fmt::format("{}: the recorded layout differs", at);
  }
  return {};
}

std::string check_microbatches(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  const std::int64_t cp = c.spec.cp, chunks = c.spec.microbatches;
  notes.tags.push_back(
      fmt::format("{} mb={} shard_primary={}", c.spec.layout, chunks, c.spec.shard_primary));
  const auto first = shard_on_ranks(impl, c.spec, subject.batch);
  // Same case, fresh world: the same shards.
  const auto again = shard_on_ranks(impl, c.spec, subject.batch);
  for (std::int64_t r = 0; r < cp; ++r) {
    for (std::int64_t m = 0; m < chunks; ++m) {
      const std::string bad = shard_difference(
          shard_of(first, r, m), shard_of(again, r, m),
          fmt::format("sharding the same batch twice: rank {} microbatch {}", r, m));
      if (!bad.empty()) return failure_prefix(c) + bad;
    }
  }
  // Every microbatch against a batch whose other microbatches hold other content (same shapes).
  if (chunks > 1) {
    notes.options.push_back("mb>1");
    Case other = c;
    other.seed = mix(c.seed, 0x0e7e5, 0, 0) % (1ull << 32);
    const Batch other_batch = make_batch(other);
    for (std::int64_t m = 0; m < chunks; ++m) {
      Batch mixed = other_batch;
      mixed.passthrough = subject.batch.passthrough;
      splice_rows(mixed, subject.batch, m * c.rows_per_microbatch(), c.rows_per_microbatch());
      const auto shards = shard_on_ranks(impl, c.spec, mixed);
      for (std::int64_t r = 0; r < cp; ++r) {
        const std::string bad =
            shard_difference(shard_of(first, r, m), shard_of(shards, r, m),
                             fmt::format("microbatch {} on rank {} changes when only the other "
                                         "microbatches' content changes",
                                         m, r));
        if (!bad.empty()) return failure_prefix(c) + bad;
      }
    }
  }
  // shard_primary = false, then the primary sharded later, is shard_primary = true.
  LayoutSpec sharded = c.spec, kept = c.spec;
  sharded.shard_primary = true;
  kept.shard_primary = false;
  const auto with_primary = shard_on_ranks(impl, sharded, subject.batch);
  const auto without = shard_on_ranks(impl, kept, subject.batch);
  const std::string primary = subject.batch.primary();
  for (std::int64_t m = 0; m < chunks; ++m) {
    const auto later = on_ranks(cp, [&](Comm& comm, std::int64_t r) {
      const RankShard& mine = shard_of(without, r, m);
      return impl.shard_primary_later(comm, mine.layout, mine.local);
    });
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    for (std::int64_t r = 0; r < cp; ++r) {
      TokenFrame frame{.what = fmt::format(
                           "'{}' sharded later on rank {}, microbatch {} (vs shard_primary = true)",
                           primary, r, m),
                       .seq_dim = 1,
                       .plan = &plan};
      for (const RowPlan& row : plan.rows)
        frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
      const std::string bad =
          tensor_mismatch(c, frame, shard_of(with_primary, r, m).local.at(primary),
                          later[static_cast<std::size_t>(r)]);
      if (!bad.empty()) return failure_prefix(c) + bad;
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo microbatches_property;
const PropertyInfo microbatches_property{
    .name = "microbatches_are_independent_and_repeatable",
    .invariant =
        "a microbatch's shards do not depend on the other microbatches' content; shard_primary = "
        "false "
        "then shard_primary_later equals shard_primary = true; the same case shards the same way "
        "twice",
    .check = check_microbatches,
    .coverage = {{kAnyCase, {}, Cross::cp}, {"mb>1"}},
};

}  // namespace cplab::properties
