// Blocking one rank step (SPEC §13.2): runs of consecutive slots classified pair by pair, or the
// whole buffers as one block whose mask is the narrowest one that is exact.
#include "attention/schedule_blocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/mask_ranges.hpp"

namespace cplab::sim {

// Every stored block is a row of the output; a row of many short runs (thd or magi chunks, many
// documents) against whole buffers (ulysses, all-gather) forms runs × runs of them.
[[noreturn]] void too_many_blocks() {
  throw ScheduleTooLarge(fmt::format(
      "schedule: more than {} blocks (cplab's bound per schedule, SPEC §13.2): the row has too "
      "many runs of slots for this algorithm; use fewer documents, larger chunks or a smaller C",
      kMaxScheduleBlocks));
}

namespace {

// A maximal run of buffer positions [begin, end) holding consecutive global slots first_slot, ...
// of one document, all real or all padding.
struct Run {
  std::int64_t begin = 0, end = 0, first_slot = 0;
  std::int32_t doc = 0;
  bool real = false;
  std::int64_t size() const { return end - begin; }
};

std::vector<Run> runs_of(const std::vector<std::int64_t>& slots, const SlotFacts& facts) {
  std::vector<Run> runs;
  for (std::size_t p = 0; p < slots.size(); ++p) {
    const auto g = static_cast<std::size_t>(slots[p]);
    const std::int32_t doc = (*facts.doc_ids)[g];
    const bool real = (*facts.real)[g] != 0;
    if (!runs.empty()) {
      Run& last = runs.back();
      if (last.real == real && last.doc == doc && slots[p - 1] + 1 == slots[p]) {
        last.end = static_cast<std::int64_t>(p) + 1;
        continue;
      }
    }
    const auto at = static_cast<std::int64_t>(p);
    runs.push_back({.begin = at, .end = at + 1, .first_slot = slots[p], .doc = doc, .real = real});
  }
  return runs;
}

// Every real q-run against every real k-run of its document. Both runs are consecutive slots of
// one document, so key b + j <= query a + i is j <= i + (a - b): a causal block's diagonal is
// exact, keys all at or before every query make it full, keys all after make it empty.
// The blocks block_runs stores, counted without forming them: per real q-run [a, a+n), the real
// k-runs of its document starting at or before a + n - 1 (sorted first slots, binary search).
std::int64_t count_run_blocks(const std::vector<Run>& q_runs, const std::vector<Run>& k_runs,
                              bool past_queries) {
  std::vector<std::pair<std::int32_t, std::int64_t>> starts;  // (document, first slot), sorted
  for (const Run& k : k_runs) {
    if (k.real) starts.emplace_back(k.doc, k.first_slot);
  }
  std::sort(starts.begin(), starts.end());
  std::int64_t count = 0;
  for (const Run& q : q_runs) {
    if (!q.real) continue;
    const auto first = std::lower_bound(starts.begin(), starts.end(),
                                        std::pair{q.doc, std::numeric_limits<std::int64_t>::min()});
    // Under bidirectional spans a key run after the queries may be visible.
    const auto last =
        std::upper_bound(starts.begin(), starts.end(),
                         std::pair{q.doc, past_queries ? std::numeric_limits<std::int64_t>::max()
                                                       : q.first_slot + q.size() - 1});
    count += last - first;
  }
  return count;
}

// A real q-run against a real k-run of its document under a mask other than causal. Runs hold
// consecutive positions, so query i sees |[lo_i, hi_i] ∩ [p_k, p_k + m)| of the keys. The mask's
// pairs are a subset of the causal ones (window, chunked) or a superset (bidirectional): when the
// counts agree the pairs do, and the block is causal with diagonal a - b. False: no pair.
bool classify_masked_runs(const Run& q, const Run& k, const SlotFacts& facts,
                          ScheduleBlock& block) {
  const std::int64_t n = q.size(), m = k.size();
  const std::int64_t k_first = (*facts.tokens)[static_cast<std::size_t>(k.first_slot)].pos;
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto g = static_cast<std::size_t>(q.first_slot + i);
    const std::int64_t lo = std::max(facts.visible_lo[g], k_first);
    const std::int64_t hi = std::min(facts.visible_hi[g], k_first + m - 1);
    if (hi >= lo) pairs += hi - lo + 1;
  }
  if (pairs == 0) return false;
  const std::int64_t diagonal = q.first_slot - k.first_slot;
  block.pairs = pairs;
  if (pairs == n * m) {
    block.mask = MaskKind::full;
  } else if (pairs == causal_pairs(n, m, diagonal)) {
    block.mask = MaskKind::causal;
    block.diagonal = diagonal;
  } else {
    block.mask = MaskKind::doc_causal;
  }
  return true;
}

StepBlocks block_runs(const std::vector<std::int64_t>& q_slots,
                      const std::vector<std::int64_t>& k_slots, const SlotFacts& facts,
                      std::int64_t max_blocks) {
  const std::vector<Run> q_runs = runs_of(q_slots, facts), k_runs = runs_of(k_slots, facts);
  std::vector<std::size_t> by_doc;  // real k-runs by document, each document's in buffer order
  for (std::size_t i = 0; i < k_runs.size(); ++i) {
    if (k_runs[i].real) by_doc.push_back(i);
  }
  std::stable_sort(by_doc.begin(), by_doc.end(),
                   [&](std::size_t x, std::size_t y) { return k_runs[x].doc < k_runs[y].doc; });
  StepBlocks out;
  const bool causal = facts.visible_lo.empty();
  const bool past_queries = facts.rule.family == MaskFamily::bidirectional;
  const std::int64_t count = count_run_blocks(q_runs, k_runs, past_queries);
  if (count > max_blocks) too_many_blocks();
  out.blocks.reserve(static_cast<std::size_t>(count));
  for (const Run& q : q_runs) {
    if (!q.real) continue;
    const auto first =
        std::lower_bound(by_doc.begin(), by_doc.end(), q.doc,
                         [&](std::size_t i, std::int32_t doc) { return k_runs[i].doc < doc; });
    for (auto it = first; it != by_doc.end() && k_runs[*it].doc == q.doc; ++it) {
      const Run& k = k_runs[*it];
      const std::int64_t a = q.first_slot, b = k.first_slot, n = q.size(), m = k.size();
      if (b > a + n - 1 && !past_queries) continue;  // every key after every query
      ScheduleBlock block;
      block.q = {q.begin, q.end};
      block.k = {k.begin, k.end};
      if (!causal) {
        if (classify_masked_runs(q, k, facts, block)) out.blocks.push_back(block);
        continue;
      }
      if (b + m - 1 <= a) {
        block.mask = MaskKind::full;
        block.pairs = n * m;
      } else {
        block.mask = MaskKind::causal;
        block.diagonal = a - b;
        block.pairs = causal_pairs(n, m, a - b);
      }
      out.blocks.push_back(block);
    }
  }
  out.skipped = static_cast<std::int64_t>(q_runs.size() * k_runs.size()) -
                static_cast<std::int64_t>(out.blocks.size());
  return out;
}

// Pairs the global rule keeps between two whole buffers: for each real query, the real keys in
// [its document's start, itself] (documents are contiguous in the stream).
std::int64_t doc_causal_pairs(const std::vector<std::int64_t>& q_slots,
                              const std::vector<std::int64_t>& k_slots, const SlotFacts& facts) {
  std::vector<std::int64_t> keys;
  keys.reserve(k_slots.size());
  for (std::int64_t g : k_slots) {
    if ((*facts.real)[static_cast<std::size_t>(g)] != 0) keys.push_back(g);
  }
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  std::int64_t pairs = 0;
  for (std::int64_t g : q_slots) {
    if ((*facts.real)[static_cast<std::size_t>(g)] == 0) continue;
    const std::int64_t begin = facts.doc_begin[static_cast<std::size_t>(g)];
    pairs += std::upper_bound(keys.begin(), keys.end(), g) -
             std::lower_bound(keys.begin(), keys.end(), begin);
  }
  return pairs;
}

// Pairs a mask other than causal keeps between two whole buffers: for each real query, the real
// keys of its document whose positions lie in its visible range.
std::int64_t masked_pairs(const std::vector<std::int64_t>& q_slots,
                          const std::vector<std::int64_t>& k_slots, const SlotFacts& facts) {
  std::vector<std::pair<std::int32_t, std::int64_t>> keys;  // (document, position), sorted
  keys.reserve(k_slots.size());
  for (std::int64_t g : k_slots) {
    const TokenFacts& t = (*facts.tokens)[static_cast<std::size_t>(g)];
    if (t.real != 0) keys.emplace_back(t.doc, t.pos);
  }
  std::sort(keys.begin(), keys.end());
  std::int64_t pairs = 0;
  for (std::int64_t g : q_slots) {
    const auto s = static_cast<std::size_t>(g);
    const TokenFacts& t = (*facts.tokens)[s];
    if (t.real == 0) continue;
    pairs += std::upper_bound(keys.begin(), keys.end(), std::pair{t.doc, facts.visible_hi[s]}) -
             std::lower_bound(keys.begin(), keys.end(), std::pair{t.doc, facts.visible_lo[s]});
  }
  return pairs;
}

bool one_real_document(const std::vector<std::int64_t>& slots, std::int32_t doc,
                       const SlotFacts& facts) {
  return std::all_of(slots.begin(), slots.end(), [&](std::int64_t g) {
    const auto s = static_cast<std::size_t>(g);
    return (*facts.real)[s] != 0 && (*facts.doc_ids)[s] == doc;
  });
}

// One block over the whole buffers. When both are real tokens of one document and the keys rise,
// query i sees the first cnt(i) keys; a causal diagonal d is exact iff cnt(i) = clamp(i + d + 1,
// 0, m) for every i, which bounds d from each query. Otherwise the block reads per-token facts.
StepBlocks block_whole(const std::vector<std::int64_t>& q_slots,
                       const std::vector<std::int64_t>& k_slots, const SlotFacts& facts) {
  StepBlocks out;
  const auto n = static_cast<std::int64_t>(q_slots.size());
  const auto m = static_cast<std::int64_t>(k_slots.size());
  if (n == 0 || m == 0) return out;
  ScheduleBlock block;
  block.q = {0, n};
  block.k = {0, m};
  block.mask = MaskKind::doc_causal;
  const std::int32_t doc = (*facts.doc_ids)[static_cast<std::size_t>(q_slots[0])];
  bool exact_causal = false;
  if (!facts.visible_lo.empty()) {
    block.pairs = masked_pairs(q_slots, k_slots, facts);
  } else if (one_real_document(q_slots, doc, facts) && one_real_document(k_slots, doc, facts) &&
             std::adjacent_find(k_slots.begin(), k_slots.end(), std::greater_equal<>()) ==
                 k_slots.end()) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    std::int64_t hi = std::numeric_limits<std::int64_t>::max();
    block.pairs = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t seen =
          std::upper_bound(k_slots.begin(), k_slots.end(), q_slots[static_cast<std::size_t>(i)]) -
          k_slots.begin();
      block.pairs += seen;
      if (seen == 0) {
        hi = std::min(hi, -i - 1);
      } else if (seen == m) {
        lo = std::max(lo, m - i - 1);
      } else {
        lo = std::max(lo, seen - i - 1);
        hi = std::min(hi, seen - i - 1);
      }
    }
    if (lo <= hi) {
      exact_causal = true;
      block.diagonal = lo;
    }
  } else {
    block.pairs = doc_causal_pairs(q_slots, k_slots, facts);
  }
  if (block.pairs == 0) {
    out.skipped = 1;
    return out;
  }
  if (block.pairs == n * m) {
    block.mask = MaskKind::full;
    block.diagonal = 0;
  } else if (exact_causal) {
    block.mask = MaskKind::causal;
  }
  out.blocks.push_back(block);
  return out;
}

}  // namespace

SlotFacts slot_facts(const std::vector<std::int32_t>& doc_ids,
                     const std::vector<std::uint8_t>& real, const std::vector<TokenFacts>& tokens,
                     const MaskRule& rule) {
  CPLAB_CHECK(doc_ids.size() == real.size() && tokens.size() == real.size(),
              "schedule: {} document ids, {} real flags and {} token facts", doc_ids.size(),
              real.size(), tokens.size());
  SlotFacts facts{.doc_ids = &doc_ids,
                  .real = &real,
                  .doc_begin = {},
                  .tokens = &tokens,
                  .rule = rule,
                  .visible_lo = {},
                  .visible_hi = {}};
  facts.doc_begin.resize(doc_ids.size());
  for (std::size_t g = 0; g < doc_ids.size(); ++g) {
    facts.doc_begin[g] = g > 0 && doc_ids[g] == doc_ids[g - 1] ? facts.doc_begin[g - 1]
                                                               : static_cast<std::int64_t>(g);
  }
  if (rule.family == MaskFamily::causal) return facts;
  VisibleRanges ranges = visible_ranges(tokens, rule);
  facts.visible_lo = std::move(ranges.lo);
  facts.visible_hi = std::move(ranges.hi);
  return facts;
}

std::int64_t causal_pairs(std::int64_t n, std::int64_t m, std::int64_t diagonal) {
  if (n <= 0 || m <= 0) return 0;
  // Σ_{t=1}^{x} min(t, m), x >= 0: the keys queries see when query i sees min(i + d + 1, m).
  auto prefix = [m](std::int64_t x) {
    if (x <= 0) return std::int64_t{0};
    if (x <= m) return x * (x + 1) / 2;
    return m * (m + 1) / 2 + (x - m) * m;
  };
  // Query i sees clamp(i + diagonal + 1, 0, m) keys: t = i + diagonal + 1 over [d + 1, d + n].
  return prefix(diagonal + n) - prefix(diagonal);
}

std::int64_t count_step_blocks(AttentionBlocking blocking, const std::vector<std::int64_t>& q_slots,
                               const std::vector<std::int64_t>& k_slots, const SlotFacts& facts) {
  if (blocking == AttentionBlocking::whole) return q_slots.empty() || k_slots.empty() ? 0 : 1;
  return count_run_blocks(runs_of(q_slots, facts), runs_of(k_slots, facts),
                          facts.rule.family == MaskFamily::bidirectional);
}

StepBlocks block_step(AttentionBlocking blocking, const std::vector<std::int64_t>& q_slots,
                      const std::vector<std::int64_t>& k_slots, const SlotFacts& facts,
                      std::int64_t max_blocks) {
  if (blocking == AttentionBlocking::runs) return block_runs(q_slots, k_slots, facts, max_blocks);
  StepBlocks out = block_whole(q_slots, k_slots, facts);
  if (static_cast<std::int64_t>(out.blocks.size()) > max_blocks) {
    too_many_blocks();
  }
  return out;
}

}  // namespace cplab::sim
