#include "reference/work.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/mask_ranges.hpp"

namespace cplab::reference {

std::vector<std::int64_t> visible_keys(const RowPlan& row, const sim::AttentionMask& mask) {
  const auto n = static_cast<std::size_t>(row.padded_len);
  CPLAB_CHECK(row.doc_ids.size() == n && row.real.size() == n,
              "row plan of L={} has {} doc ids and {} real flags", row.padded_len,
              row.doc_ids.size(), row.real.size());
  // Walking the stream in order, each document's running count of real keys is exactly the number
  // of its real keys at or before the current slot, wherever the document's slots lie.
  std::int32_t max_doc = 0;
  for (std::int32_t doc : row.doc_ids) max_doc = std::max(max_doc, doc);
  std::vector<std::int64_t> seen_in_doc(static_cast<std::size_t>(max_doc) + 1, 0);
  std::vector<std::int64_t> visible(n, 0);
  for (std::size_t g = 0; g < n; ++g) {
    if (!row.real[g]) continue;
    visible[g] = ++seen_in_doc[static_cast<std::size_t>(row.doc_ids[g])];
  }
  if (mask.is_causal()) return visible;
  // A document's real tokens hold positions 0, 1, ...: a query at p sees the positions [lo, hi]
  // its mask names, all of them real keys of its document. Under causal [0, p] (the count above);
  // a window cuts it to its last W, a chunk to the chunk's start; a span reaches its last position
  // in the document.
  const sim::VisibleRanges ranges = sim::visible_ranges(
      sim::row_token_facts(row.doc_ids, row.real, row.caller_pos, mask), mask.rule());
  for (std::size_t g = 0; g < n; ++g) visible[g] = ranges.hi[g] - ranges.lo[g] + 1;
  return visible;
}

std::vector<std::int64_t> causal_work(const RowPlan& row, const sim::AttentionMask& mask) {
  const std::vector<std::int64_t> visible = visible_keys(row, mask);
  std::vector<std::int64_t> work(row.index.size(), 0);
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    for (std::int64_t g : row.index[r]) work[r] += visible[g];
  }
  return work;
}

double imbalance(const std::vector<std::int64_t>& work) {
  if (work.empty()) return 1.0;
  const std::int64_t total = std::accumulate(work.begin(), work.end(), std::int64_t{0});
  if (total == 0) return 1.0;
  const double mean = static_cast<double>(total) / static_cast<double>(work.size());
  return static_cast<double>(*std::max_element(work.begin(), work.end())) / mean;
}

}  // namespace cplab::reference
