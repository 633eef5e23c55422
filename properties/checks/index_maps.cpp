// Property 1: the index maps of all ranks form a permutation of [0, L) with equal local counts,
// they are the reference's construction, and the closed-form global_index/owner agree with both.
#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// The closed form (built from params) against an index map given for every rank.
std::string closed_form_mismatch(const sim::LayoutMap& map,
                                 const std::vector<std::vector<std::int64_t>>& index,
                                 const std::string& whose) {
  for (std::size_t r = 0; r < index.size(); ++r) {
    const auto rank = static_cast<std::int64_t>(r);
    if (map.local_len() != static_cast<std::int64_t>(index[r].size())) {
      return fmt::format("closed form from {} gives local length {}, rank {} holds {}", whose,
                         map.local_len(), r, index[r].size());
    }
    for (std::int64_t k = 0; k < map.local_len(); ++k) {
      const std::int64_t g = index[r][static_cast<std::size_t>(k)];
      if (map.global_index(rank, k) != g) {
        return fmt::format(
            "closed form from {}: global_index({}, {}) = {}, but rank {} holds slot {} there",
            whose, r, k, map.global_index(rank, k), r, g);
      }
      const index_math::Slot owner = map.owner(g);
      if (owner.rank != rank || owner.offset != k) {
        return fmt::format(
            "closed form from {}: owner({}) = rank {} offset {}, but rank {} holds it at offset {}",
            whose, g, owner.rank, owner.offset, r, k);
      }
    }
  }
  return {};
}

std::string check_index_maps(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  const auto shards = shard_on_ranks(impl, c.spec, subject.batch);
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  const std::int64_t cp = c.spec.cp;
  notes.tags.push_back(
      fmt::format("{} {} {}", c.spec.layout, cp_class(cp), c.packed() ? "packed" : "bshd"));
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      const RowPlan& row = plan.rows[b];
      const std::string at = fmt::format("microbatch {} row {}", m, b);
      // The reference's construction against the closed form (shared with the twin and the GPU).
      const std::string ref_closed =
          closed_form_mismatch(reference_map(entry, row), row.index, "the reference's parameters");
      if (!ref_closed.empty()) return failure_prefix(c) + at + ": " + ref_closed;

      std::vector<std::vector<std::int64_t>> index;
      std::vector<std::uint8_t> seen(static_cast<std::size_t>(row.padded_len), 0);
      for (std::int64_t r = 0; r < cp; ++r) {
        const ShardLayout& layout = shard_of(shards, r, m).layout;
        if (layout.padded_len != row.padded_len) {
          return failure_prefix(c) +
                 fmt::format("{}: rank {} records L={}, the reference pads to L={}", at, r,
                             layout.padded_len, row.padded_len);
        }
        CPLAB_CHECK(b < layout.index.size(), "rank {} recorded {} rows for microbatch {}", r,
                    layout.index.size(), m);
        const auto& local = layout.index[b];
        if (static_cast<std::int64_t>(local.size()) != row.local_len()) {
          return failure_prefix(c) +
                 fmt::format("{}: rank {} holds {} tokens; every rank must hold L/C = {}/{} = {}",
                             at, r, local.size(), row.padded_len, cp, row.local_len());
        }
        for (std::size_t k = 0; k < local.size(); ++k) {
          const std::int64_t g = local[k];
          if (g < 0 || g >= row.padded_len || seen[static_cast<std::size_t>(g)]) {
            return failure_prefix(c) +
                   fmt::format(
                       "{}: rank {} local token {} is slot {}, {} (not a permutation of [0, {}))",
                       at, r, k, g, g < 0 || g >= row.padded_len ? "out of range" : "held twice",
                       row.padded_len);
          }
          seen[static_cast<std::size_t>(g)] = 1;
        }
        const std::string differs = vector_mismatch(
            fmt::format("{}: rank {} index map vs the reference's construction", at, r),
            row.index[static_cast<std::size_t>(r)], local);
        if (!differs.empty()) return failure_prefix(c) + differs;
        index.push_back(local);
      }
      // The implementation's own recorded parameters must give its own maps in closed form.
      const ShardLayout& first = shard_of(shards, 0, m).layout;
      if (entry.descriptor->map.source != sim::MapSource::shape) {
        const sim::LayoutMap own(*entry.descriptor, row.cp, row.padded_len,
                                 b < first.map.size() ? first.map[b] : MapParams{});
        const std::string own_closed = closed_form_mismatch(own, index, "the recorded parameters");
        if (!own_closed.empty()) return failure_prefix(c) + at + ": " + own_closed;
      }
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo index_maps_property;
const PropertyInfo index_maps_property{
    .name = "index_maps_are_a_closed_form_permutation",
    .invariant =
        "every rank holds L/C slots, together a permutation of [0, L) equal to the reference's "
        "construction, and global_index/owner in closed form agree with it",
    .check = check_index_maps,
    .coverage = {{kAnyCase, {}, Cross::cp}},
};

}  // namespace cplab::properties
