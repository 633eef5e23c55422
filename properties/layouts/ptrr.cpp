// ptrr (torch's processing-time round robin): blocks of B slots priced by the key blocks their
// queries see, sorted by cost and dealt out in a snake, n/C blocks per rank. Balance, in block
// costs recounted here from the row: every rank holds whole blocks, and its block costs add up to
// exactly what the snake deals it from the sorted costs (SPEC §10.2; hence any two ranks within
// max(Σ even-row spans, Σ odd-row spans)). Causal work is reported.
#include "layouts/ptrr.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include <algorithm>
#include <functional>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;

// The key blocks each query block sees, from the row's document ids and real flags: a real query
// q of a document whose first real token is f sees the blocks of [f, q] (a document's real tokens
// are contiguous in this layout's stream: documents stay at their caller offsets).
std::vector<I> recounted_block_costs(const RowPlan& row, I block) {
  const I blocks = row.padded_len / block;
  std::vector<I> first_real;
  for (I g = 0; g < row.padded_len; ++g) {
    if (!row.real[g]) continue;
    const auto doc = static_cast<std::size_t>(row.doc_ids[g]);
    if (first_real.size() <= doc) first_real.resize(doc + 1, -1);
    if (first_real[doc] < 0) first_real[doc] = g;
  }
  std::vector<I> costs(static_cast<std::size_t>(blocks), 0);
  for (I i = 0; i < blocks; ++i) {
    std::vector<bool> seen(static_cast<std::size_t>(blocks), false);
    for (I q = i * block; q < (i + 1) * block; ++q) {
      if (!row.real[q]) continue;
      for (I j = first_real[static_cast<std::size_t>(row.doc_ids[q])] / block; j <= i; ++j)
        seen[static_cast<std::size_t>(j)] = true;
    }
    costs[static_cast<std::size_t>(i)] = std::count(seen.begin(), seen.end(), true);
  }
  return costs;
}

std::string ptrr_balance(const BalanceFacts& f) {
  const I cp = f.spec.cp, block = layouts::ptrr_block_size.of(f.spec);
  if (cp == 1) return {};
  const std::vector<I> costs = recounted_block_costs(f.row, block);
  std::vector<I> load(static_cast<std::size_t>(cp), 0);
  for (I r = 0; r < cp; ++r) {
    const std::vector<I>& local = f.index[static_cast<std::size_t>(r)];
    for (std::size_t k = 0; k < local.size(); ++k) {
      const I want = k % block == 0 ? local[k] : local[k - k % block] + static_cast<I>(k % block);
      if (local[k] != want || (k % block == 0 && local[k] % block != 0)) {
        return fmt::format("ptrr rank {} token {} is slot {}: ranks hold whole blocks of B={}", r,
                           k, local[k], block);
      }
      if (k % block == 0) load[static_cast<std::size_t>(r)] += costs[local[k] / block];
    }
  }
  // What the snake gives every rank, from the sorted costs alone: equal costs may trade blocks,
  // never loads, so these are the loads whatever the ties.
  std::vector<I> sorted = costs;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::vector<I> snake(static_cast<std::size_t>(cp), 0);
  for (std::size_t p = 0; p < sorted.size(); ++p) {
    const I row = static_cast<I>(p) / cp, place = static_cast<I>(p) % cp;
    snake[static_cast<std::size_t>(row % 2 == 0 ? place : cp - 1 - place)] += sorted[p];
  }
  if (load != snake) {
    return fmt::format(
        "ptrr block costs per rank [{}], but the snake over the sorted costs gives [{}] (block "
        "costs [{}])",
        fmt::join(load, ", "), fmt::join(snake, ", "), fmt::join(costs, ", "));
  }
  const double imbalance = reference::imbalance(f.work);
  f.tags.push_back(fmt::format("ptrr imbalance {}", imbalance < 1.5 ? "<1.5" : ">=1.5"));
  return {};
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> ptrr_mutants();  // ptrr_mutants.cpp
}  // namespace mutants

extern const LayoutEntry ptrr_entry;
const LayoutEntry ptrr_entry{
    .name = CPLAB_LAYOUT_NAME(ptrr),
    .balance = ptrr_balance,
    // Small blocks most often; a row the layout pads needs blocks of 2 slots or more.
    .draw_options =
        [](LayoutSpec& spec, bool padded_row) {
          namespace gen = rc::gen;
          const I least = padded_row ? 2 : 1;
          const I largest = std::max<I>(least + 1, 96 / spec.cp);
          layouts::ptrr_block_size.set(
              spec, *gen::weightedOneOf<I>({{3, gen::inRange<I>(least, 5)},
                                            {1, gen::inRange<I>(least, largest + 1)}}));
        },
    .own_mutants = mutants::ptrr_mutants,
};

}  // namespace cplab::properties
