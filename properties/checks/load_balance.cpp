// Property 8: load balance (SPEC §8), on the implementation's own partition. Causal work of a rank
// = Σ over its real queries of the real keys the mask lets it see (same document, key <= query).
// Each layout states its own promise (its properties/layouts/ file: equal on full rows, equal per
// document, an area bound, or reported only). Every layout: the work of each rank is what the
// reference's partition gives.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "properties/checks/checks.hpp"
#include "reference/work.hpp"

namespace cplab::properties {

namespace {

// Keys each slot's query sees, counted here from the row's document ids and real flags.
std::vector<std::int64_t> visible_keys(const RowPlan& row) {
  std::vector<std::int64_t> seen_in_doc(
      row.doc_ids.empty() ? 1 : *std::max_element(row.doc_ids.begin(), row.doc_ids.end()) + 1, 0);
  std::vector<std::int64_t> visible(row.doc_ids.size(), 0);
  for (std::size_t g = 0; g < visible.size(); ++g) {
    if (row.real[g]) visible[g] = ++seen_in_doc[static_cast<std::size_t>(row.doc_ids[g])];
  }
  return visible;
}

std::string balance_mismatch(const Case& c, const LayoutEntry& entry, const RowPlan& row,
                             const std::vector<std::vector<std::int64_t>>& index,
                             CheckNotes& notes) {
  const std::int64_t cp = c.spec.cp;
  const std::vector<std::int64_t> visible = visible_keys(row);
  std::vector<std::int64_t> work(static_cast<std::size_t>(cp), 0);
  for (std::int64_t r = 0; r < cp; ++r) {
    for (std::int64_t g : index[static_cast<std::size_t>(r)])
      work[static_cast<std::size_t>(r)] += visible[static_cast<std::size_t>(g)];
  }
  const std::int64_t total = std::accumulate(work.begin(), work.end(), std::int64_t{0});
  const std::int64_t largest = *std::max_element(work.begin(), work.end());
  const BalanceFacts facts{.spec = c.spec,
                           .row = row,
                           .index = index,
                           .visible = visible,
                           .work = work,
                           .total = total,
                           .largest = largest,
                           .tags = notes.tags};
  const std::string broken = entry.balance(facts);
  if (!broken.empty()) return broken;
  // SPEC §8's promises first (they hold for the reference too), then the exact figures.
  const std::vector<std::int64_t> reference_work = reference::causal_work(row);
  if (work != reference_work) {
    return fmt::format("per-rank causal work [{}] differs from the reference partition's [{}]",
                       fmt::join(work, ", "), fmt::join(reference_work, ", "));
  }
  notes.notes.push_back(fmt::format("causal work per rank [{}]", fmt::join(work, ", ")));
  return {};
}

std::string check_load_balance(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  const auto shards = shard_on_ranks(impl, c.spec, subject.batch);
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  notes.tags.push_back(fmt::format("{} {}", c.spec.layout, cp_class(c.spec.cp)));
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      std::vector<std::vector<std::int64_t>> index;
      for (std::int64_t r = 0; r < c.spec.cp; ++r) {
        const ShardLayout& layout = shard_of(shards, r, m).layout;
        CPLAB_CHECK(b < layout.index.size(), "rank {} recorded no index map for row {}", r, b);
        for (std::int64_t g : layout.index[b]) {
          CPLAB_CHECK(g >= 0 && g < plan.rows[b].padded_len,
                      "rank {} holds slot {} outside [0, L={})", r, g, plan.rows[b].padded_len);
        }
        index.push_back(layout.index[b]);
      }
      const std::string bad = balance_mismatch(c, entry, plan.rows[b], index, notes);
      if (!bad.empty())
        return failure_prefix(c) + fmt::format("microbatch {} row {}: ", m, b) + bad;
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo load_balance_property;
const PropertyInfo load_balance_property{
    .name = "causal_work_is_balanced",
    .invariant =
        "per-rank causal work is the reference partition's, and keeps the layout's own balance "
        "promise (SPEC §8, its property entry's rule); a layout without a bound reports its "
        "imbalance",
    .check = check_load_balance,
    .coverage = {{kAnyCase, {}, Cross::cp}},
};

}  // namespace cplab::properties
