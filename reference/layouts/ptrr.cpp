// ptrr (torch's processing-time round robin, SPEC §10.2, by construction): the stream padded at
// its end to a multiple of B and cut into n = L/B blocks, n divisible by C. A query block costs the
// number of non-empty key blocks in its row of the block mask, the mask built here pair by pair
// from the document-causal rule (a BSHD row is one causal document). Blocks sorted by cost
// descending (stably), cut into rows of C with every odd row reversed (a snake); position j of
// each row goes to rank j, each rank's blocks ascending. Packed rows keep their documents at their
// caller offsets; positions restart per document as in every end-padded stream.
#include "layouts/ptrr.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "reference/layouts/row_stream.hpp"
#include "reference/plan.hpp"

namespace cplab::reference {
namespace {

// cost[i]: the number of key blocks j for which some real query of block i may see some real key of
// block j (same document, key at or before the query) — the non-empty entries of row i of the block
// mask. A query of document d in block i sees every real key of d up to it, so row i is the union,
// over the documents D_i with a real token in block i, of K_d ∩ [0, i] (K_d: the blocks holding a
// real token of d). The mask itself is never built: it has (L/B)² entries (2 GB at 16M tokens).
// |K_d ∩ [0, i]| is a running count; a block counted for two documents of D_i is one that holds
// real tokens of both, so only those blocks (at most two per document of a packed row, whose
// documents are contiguous) are looked at one by one.
std::vector<std::int64_t> block_costs(const RowPlan& row, std::int64_t block) {
  const auto blocks = static_cast<std::size_t>(row.padded_len / block);
  std::int32_t max_doc = 0;
  for (std::int32_t doc : row.doc_ids) max_doc = std::max(max_doc, doc);
  const auto docs = static_cast<std::size_t>(max_doc) + 1;
  // docs_in[i]: the documents with a real token in block i, each once; key_blocks[d]: K_d
  // ascending.
  std::vector<std::vector<std::int32_t>> docs_in(blocks);
  std::vector<std::vector<std::int64_t>> key_blocks(docs);
  for (std::int64_t q = 0; q < row.padded_len; ++q) {
    if (!row.real[q]) continue;
    const std::int32_t d = row.doc_ids[q];
    const std::int64_t i = q / block;
    std::vector<std::int64_t>& mine = key_blocks[static_cast<std::size_t>(d)];
    if (!mine.empty() && mine.back() == i) continue;
    mine.push_back(i);
    docs_in[static_cast<std::size_t>(i)].push_back(d);
  }
  // shared_blocks[d]: the blocks of K_d that hold real tokens of another document too.
  std::vector<std::vector<std::int64_t>> shared_blocks(docs);
  for (std::size_t i = 0; i < blocks; ++i) {
    if (docs_in[i].size() < 2) continue;
    for (std::int32_t d : docs_in[i])
      shared_blocks[static_cast<std::size_t>(d)].push_back(static_cast<std::int64_t>(i));
  }
  std::vector<std::int64_t> seen_count(docs, 0);  // |K_d ∩ [0, i]| as i advances
  std::vector<std::int64_t> times_counted(blocks, 0);
  std::vector<std::int64_t> touched;
  std::vector<std::int64_t> cost(blocks, 0);
  for (std::size_t i = 0; i < blocks; ++i) {
    std::int64_t total = 0;
    for (std::int32_t d : docs_in[i]) {
      const auto du = static_cast<std::size_t>(d);
      total += ++seen_count[du];            // block i is in K_d: d has a real token here
      if (docs_in[i].size() < 2) continue;  // one document: nothing counted twice
      for (std::int64_t j : shared_blocks[du]) {
        if (j > static_cast<std::int64_t>(i)) break;
        if (times_counted[static_cast<std::size_t>(j)]++ == 0) touched.push_back(j);
      }
    }
    for (std::int64_t j : touched) {
      total -= times_counted[static_cast<std::size_t>(j)] - 1;
      times_counted[static_cast<std::size_t>(j)] = 0;
    }
    touched.clear();
    cost[i] = total;
  }
  return cost;
}

RowPlan plan_ptrr_row(const LayoutSpec& spec, std::int64_t caller_len,
                      const std::vector<std::int64_t>* seq_lens,
                      const std::vector<std::int64_t>* seq_lens_padded, std::int64_t pinned_len) {
  const row_stream::CallerRow caller =
      row_stream::read_caller_row(caller_len, seq_lens, seq_lens_padded);
  if (spec.cp == 1) return row_stream::identity_plan(caller, pinned_len);
  const std::int64_t block = layouts::ptrr_block_size.of(spec);
  CPLAB_CHECK(block >= 1, "ptrr block size must be at least 1, got {}", block);
  const std::int64_t len = row_stream::resolve_padded_len(
      CPLAB_LAYOUT_NAME(ptrr), row_stream::ceil_to(caller.len, block), pinned_len);
  const std::int64_t blocks = len / block;
  CPLAB_CHECK(len % block == 0 && blocks % spec.cp == 0,
              "ptrr: L={} is {} blocks of B={}, which do not divide over cp={} ranks (pad the row "
              "to a multiple of B·C={})",
              len, blocks, block, spec.cp, block * spec.cp);
  RowPlan row = row_stream::end_padded_stream(caller, spec.cp, len);

  row.map_costs = block_costs(row, block);
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
  // map: the rank-major blocks and B (the chunk-assignment map of layouts/magi_map.hpp).
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
const LayoutInfo ptrr_layout{.name = CPLAB_LAYOUT_NAME(ptrr), .plan_row = plan_ptrr_row};

}  // namespace cplab::reference
