#include "reference/work.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace cplab::reference {

std::vector<std::int64_t> visible_keys(const RowPlan& row) {
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
  return visible;
}

std::vector<std::int64_t> causal_work(const RowPlan& row) {
  const std::vector<std::int64_t> visible = visible_keys(row);
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
