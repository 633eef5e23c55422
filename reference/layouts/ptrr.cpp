// ptrr (torch's processing-time round robin, SPEC §10.2, by construction): the stream padded at
// its end to a multiple of B and cut into n = L/B blocks, n divisible by C. A query block costs the
// number of non-empty key blocks in its row of the block mask, the mask built here pair by pair
// from the document-causal rule (a BSHD row is one causal document). Blocks sorted by cost
// descending (stably), cut into rows of C with every odd row reversed (a snake); position j of
// each row goes to rank j, each rank's blocks ascending. Packed rows keep their documents at their
// caller offsets; positions restart per document as in every end-padded stream.
#include <algorithm>
#include <numeric>

#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"
#include "reference/types/error.hpp"

namespace cplab::reference {
namespace {

// mask[i][j]: some real query of block i may see some real key of block j (same document, key at
// or before the query). Walking the stream in order, each document lists the blocks that hold its
// real keys so far; a real query sees exactly those, so its block's mask row gets them all.
std::vector<std::vector<bool>> block_mask(const RowPlan& row, std::int64_t block) {
  const std::int64_t blocks = row.padded_len / block;
  std::vector<std::vector<bool>> mask(static_cast<std::size_t>(blocks),
                                      std::vector<bool>(static_cast<std::size_t>(blocks), false));
  std::int32_t max_doc = 0;
  for (std::int32_t doc : row.doc_ids) max_doc = std::max(max_doc, doc);
  std::vector<std::vector<std::int64_t>> key_blocks(static_cast<std::size_t>(max_doc) + 1);
  for (std::int64_t q = 0; q < row.padded_len; ++q) {
    if (!row.real[q]) continue;
    std::vector<std::int64_t>& seen = key_blocks[static_cast<std::size_t>(row.doc_ids[q])];
    if (seen.empty() || seen.back() != q / block) seen.push_back(q / block);
    // The query's own block's row learns every key block seen so far (once per block suffices:
    // the list only grows, so its last real query of the document in the block marks them all).
    const bool last_in_block = q + 1 == row.padded_len || (q + 1) / block != q / block ||
                               !row.real[q + 1] || row.doc_ids[q + 1] != row.doc_ids[q];
    if (!last_in_block) continue;
    for (std::int64_t j : seen) mask[q / block][j] = true;
  }
  return mask;
}

RowPlan plan_ptrr_row(const LayoutSpec& spec, std::int64_t caller_len,
                      const std::vector<std::int64_t>* seq_lens,
                      const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t block = spec.block_size;
  CPLAB_CHECK(block >= 1, "ptrr block size must be at least 1, got {}", block);
  const std::int64_t len =
      row_stream::resolve_padded_len("ptrr", row_stream::ceil_to(caller.len, block), pinned_len);
  const std::int64_t blocks = len / block;
  CPLAB_CHECK(len % block == 0 && blocks % spec.cp == 0,
              "ptrr: L={} is {} blocks of B={}, which do not divide over cp={} ranks (pad the row "
              "to a multiple of B·C={})",
              len, blocks, block, spec.cp, block * spec.cp);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);

  const std::vector<std::vector<bool>> mask = block_mask(row, block);
  row.map_costs.clear();
  for (const auto& mask_row : mask)
    row.map_costs.push_back(std::count(mask_row.begin(), mask_row.end(), true));
  std::vector<std::int64_t> sorted(static_cast<std::size_t>(blocks));
  std::iota(sorted.begin(), sorted.end(), std::int64_t{0});
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::int64_t a, std::int64_t b) {
    return row.map_costs[a] > row.map_costs[b];
  });
  // Deal the sorted blocks out row by row of C, every odd row right to left.
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(spec.cp));
  for (std::int64_t p = 0; p < blocks; ++p) {
    const std::int64_t group = p / spec.cp, place = p % spec.cp;
    const std::int64_t rank = group % 2 == 0 ? place : spec.cp - 1 - place;
    owned[rank].push_back(sorted[p]);
  }
  // map: the rank-major blocks and B (the chunk-assignment map of sim/layouts/magi_map.hpp).
  row.map.unit = block;
  std::vector<std::vector<row_stream::SlotRange>> ranges(static_cast<std::size_t>(spec.cp));
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    std::sort(owned[r].begin(), owned[r].end());
    for (std::int64_t b : owned[r]) {
      ranges[r].push_back({b * block, (b + 1) * block});
      row.map.table.push_back(b);
    }
  }
  row_stream::assign_ranges(row, ranges);
  return row;
}

}  // namespace

extern const LayoutInfo ptrr_layout;
const LayoutInfo ptrr_layout{.name = "ptrr", .plan_row = plan_ptrr_row, .reads = kReadsBlockSize};

}  // namespace cplab::reference
