// per-doc-head-tail (torch's _PerDocumentHeadTailLoadBalancer, SPEC §10.1): head-tail inside every
// document of a row whose padding is the caller's (every document a multiple of 2C, filling the
// row; the generators draw only such rows through the acceptance contract,
// layouts/row_acceptance.hpp). Balance (SPEC §8): every document without the caller's padding gives
// every rank the same work (rank r's two chunks of a document see c·(2C·c + 1) keys together
// whatever r is), so a row without any padding gives every rank the same work in all.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {
namespace {

bool all_equal(const std::vector<std::int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [&](std::int64_t w) { return w == v.front(); });
}

std::string equal_per_document(const BalanceFacts& f) {
  const std::int64_t cp = f.spec.cp;
  if (cp == 1) return {};
  const RowPlan& row = f.row;
  // A BSHD row is one document of the whole row.
  const std::vector<std::int64_t> bounds =
      row.packed ? row.cu_seqlens_padded : std::vector<std::int64_t>{0, row.padded_len};
  bool padded_somewhere = false;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::int64_t begin = bounds[i], end = bounds[i + 1];
    std::int64_t real = 0;
    for (std::int64_t g = begin; g < end; ++g) real += row.real[static_cast<std::size_t>(g)];
    if (real != end - begin) padded_somewhere = true;
    if (real != end - begin || real == 0) continue;  // the caller's padding need not balance
    std::vector<std::int64_t> doc_work(static_cast<std::size_t>(cp), 0);
    for (std::int64_t r = 0; r < cp; ++r) {
      for (std::int64_t g : f.index[static_cast<std::size_t>(r)]) {
        if (g >= begin && g < end)
          doc_work[static_cast<std::size_t>(r)] += f.visible[static_cast<std::size_t>(g)];
      }
    }
    if (!all_equal(doc_work)) {
      return fmt::format(
          "per-doc-head-tail document {} of {} tokens (no padding) gives unequal work [{}] "
          "(whole row: [{}])",
          i + 1, real, fmt::join(doc_work, ", "), fmt::join(f.work, ", "));
    }
  }
  if (!padded_somewhere && !all_equal(f.work)) {
    return fmt::format("per-doc-head-tail on a row of L={} without padding gives unequal work [{}]",
                       row.padded_len, fmt::join(f.work, ", "));
  }
  return {};
}

}  // namespace

namespace {

// SPEC §13.4: head-tail inside every document, so on a row none of whose slots is padding the
// ring gives every rank the same work at every step, document by document.
std::string per_doc_schedule_balance(const ScheduleBalanceFacts& f) {
  if (f.schedule.algo != sim::AttentionAlgo::ring ||
      std::find(f.row.real.begin(), f.row.real.end(), 0) != f.row.real.end())
    return {};
  const std::string unequal = steps_of_unequal_work(f.schedule);
  return unequal.empty() ? unequal
                         : fmt::format("per-doc-head-tail ring on a row without padding (L={}): {}",
                                       f.row.padded_len, unequal);
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> per_doc_head_tail_mutants();  // per_doc_head_tail_mutants.cpp
}  // namespace mutants

extern const LayoutEntry per_doc_head_tail_entry;
const LayoutEntry per_doc_head_tail_entry{
    .name = CPLAB_LAYOUT_NAME(per_doc_head_tail),
    .balance = equal_per_document,
    .schedule_balance = per_doc_schedule_balance,
    .own_mutants = mutants::per_doc_head_tail_mutants,
};

}  // namespace cplab::properties
