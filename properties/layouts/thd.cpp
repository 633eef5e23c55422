// thd (TransformerEngine THD): head-tail inside every document, each padded to a multiple of 2C;
// local cu_seqlens = cu_seqlens_padded / C. Packed rows only. Balance: equal work inside every
// document without padding. Valid count: each rank's two chunks of every document.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {
namespace {

std::string equal_per_document(const BalanceFacts& f) {
  const std::int64_t cp = f.spec.cp;
  if (cp == 1) return {};
  const RowPlan& row = f.row;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    const std::int64_t begin = row.cu_seqlens_padded[i], end = row.cu_seqlens_padded[i + 1];
    std::int64_t real = 0;
    for (std::int64_t g = begin; g < end; ++g) real += row.real[static_cast<std::size_t>(g)];
    if (real != end - begin || real == 0) continue;  // padded documents need not balance
    std::vector<std::int64_t> doc_work(static_cast<std::size_t>(cp), 0);
    for (std::int64_t r = 0; r < cp; ++r) {
      for (std::int64_t g : f.index[static_cast<std::size_t>(r)]) {
        if (g >= begin && g < end)
          doc_work[static_cast<std::size_t>(r)] += f.visible[static_cast<std::size_t>(g)];
      }
    }
    if (std::any_of(doc_work.begin(), doc_work.end(),
                    [&](std::int64_t w) { return w != doc_work.front(); })) {
      return fmt::format(
          "thd document {} of {} tokens (no padding) gives unequal work [{}] (whole row: [{}])",
          i + 1, real, fmt::join(doc_work, ", "), fmt::join(f.work, ", "));
    }
  }
  return {};
}

// SPEC §3: a document of n real tokens padded to 2C·c slots gives rank r its chunks r and
// 2C-1-r, so r holds clamp(n - r·c, 0, c) + clamp(n - (2C-1-r)·c, 0, c) real tokens.
std::int64_t valid_in_document(std::int64_t real, std::int64_t padded, std::int64_t cp,
                               std::int64_t rank) {
  const std::int64_t chunk = padded / (2 * cp);
  const auto in_chunk = [&](std::int64_t x) { return std::clamp<std::int64_t>(x, 0, chunk); };
  return in_chunk(real - rank * chunk) + in_chunk(real - (2 * cp - 1 - rank) * chunk);
}

}  // namespace

namespace {

// SPEC §13.4: head-tail inside every document, so on a row none of whose slots is padding the
// ring gives every rank the same work at every step, document by document.
std::string thd_schedule_balance(const ScheduleBalanceFacts& f) {
  if (f.schedule.algo != sim::AttentionAlgo::ring ||
      std::find(f.row.real.begin(), f.row.real.end(), 0) != f.row.real.end())
    return {};
  const std::string unequal = steps_of_unequal_work(f.schedule);
  return unequal.empty() ? unequal
                         : fmt::format("thd ring on a row without padding (L={}): {}",
                                       f.row.padded_len, unequal);
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> thd_mutants();  // thd_mutants.cpp
}  // namespace mutants

extern const LayoutEntry thd_entry;
const LayoutEntry thd_entry{
    .name = CPLAB_LAYOUT_NAME(thd),
    .balance = equal_per_document,
    .local_document_valid = valid_in_document,
    .schedule_balance = thd_schedule_balance,
    // The shared mutants whose bug lies on this layout's code path (the hunt runs them here).
    .carries_mutants =
        {
            "attention_document_boundary_block_skipped",
            "gather_without_reorder",
        },
    .own_mutants = mutants::thd_mutants,
};

}  // namespace cplab::properties
