#pragma once
// Attention schedules written by hand for the GPU path's tests, independent of the schedule
// builder: rank r holds slots [r·ℓ, (r+1)·ℓ) in order, under the first registered layout that maps
// a row so (hand_layout()), with documents of given lengths, as a ring or an all-gather. Pair
// counts come from the global rule (key slot <= query slot, both real, same document), not from the
// mask predicate the code under test asks.
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::gputest {

enum class HandMasks {
  doc_causal,  // every block doc-causal
  causal,      // one document, all real: diagonal blocks causal, blocks below it full
  split_keys,  // doc-causal, each block cut in two key halves (two blocks per query: a merge)
};

// Global slots of rank r's local tokens.
inline std::vector<std::int64_t> contiguous_index(std::int64_t r, std::int64_t local) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(local));
  std::iota(index.begin(), index.end(), r * local);
  return index;
}

// The layout the hand schedules name, so that what the code under test asks of it (its descriptor)
// fits them: the first that shards plainly, attends over the document-causal mask (no varlen
// segments) and holds rank r's slots [r·ℓ, (r+1)·ℓ) in order on BSHD rows it pads (contiguous
// today).
inline const std::string& hand_layout() {
  static const std::string name = testsupport::first_layout(
      "a plain layout of consecutive rank slices", [](const sim::LayoutDescriptor& layout) {
        if (!testsupport::plain_sharding(layout) || layout.attention.varlen_segments) return false;
        for (const std::int64_t cp : {2, 3, 4}) {
          LayoutSpec spec;
          spec.layout = layout.name;
          spec.cp = cp;
          const RowPlan row = reference::plan_row(spec, 4 * layout.padding.unit(spec));
          for (std::int64_t r = 0; r < cp; ++r) {
            if (row.index[static_cast<std::size_t>(r)] != contiguous_index(r, row.local_len()))
              return false;
          }
        }
        return true;
      });
  return name;
}

// Documents of `doc_lens` from slot 0, the rest row padding (document 0, not real).
inline void fill_documents(sim::AttentionSchedule& s, const std::vector<std::int64_t>& doc_lens) {
  s.doc_ids.assign(static_cast<std::size_t>(s.padded_len), 0);
  s.real.assign(static_cast<std::size_t>(s.padded_len), 0);
  std::int64_t at = 0;
  for (std::size_t d = 0; d < doc_lens.size(); ++d)
    for (std::int64_t i = 0; i < doc_lens[d] && at < s.padded_len; ++i, ++at) {
      s.doc_ids[static_cast<std::size_t>(at)] = static_cast<std::int32_t>(d + 1);
      s.real[static_cast<std::size_t>(at)] = 1;
    }
  s.facts = sim::row_token_facts(s.doc_ids, s.real, {}, s.mask);
}

// Pairs the global rule keeps between query slots [q0, q0 + nq) and key slots [k0, k0 + nk).
inline std::int64_t rule_pairs(const sim::AttentionSchedule& s, std::int64_t q0, std::int64_t nq,
                               std::int64_t k0, std::int64_t nk) {
  std::int64_t n = 0;
  for (std::int64_t g = q0; g < q0 + nq; ++g)
    for (std::int64_t h = k0; h < k0 + nk; ++h) {
      const auto gi = static_cast<std::size_t>(g), hi = static_cast<std::size_t>(h);
      n += s.real[gi] && s.real[hi] && s.doc_ids[gi] == s.doc_ids[hi] && h <= g;
    }
  return n;
}

inline sim::ScheduleBlock hand_block(const sim::AttentionSchedule& s, std::int64_t q_slot,
                                     std::int64_t q_begin, std::int64_t q_end, std::int64_t k_slot,
                                     std::int64_t k_begin, std::int64_t k_end, sim::MaskKind mask) {
  return {
      .q = {q_begin, q_end},
      .k = {k_begin, k_end},
      .mask = mask,
      .diagonal = 0,
      .pairs = rule_pairs(s, q_slot + q_begin, q_end - q_begin, k_slot + k_begin, k_end - k_begin)};
}

// The blocks of rank r's queries against rank `from`'s keys, key buffer positions from `k0`.
inline void add_blocks(const sim::AttentionSchedule& s, sim::RankStep& rs, std::int64_t r,
                       std::int64_t from, std::int64_t k0, HandMasks masks) {
  const std::int64_t local = s.local_len(), q_slot = r * local, k_slot = from * local - k0;
  if (masks == HandMasks::causal) {
    if (from > r) {
      ++rs.skipped_blocks;
      return;
    }
    rs.blocks.push_back(hand_block(s, q_slot, 0, local, k_slot, k0, k0 + local,
                                   from == r ? sim::MaskKind::causal : sim::MaskKind::full));
  } else if (masks == HandMasks::split_keys && local >= 2) {
    const std::int64_t half = local / 2;
    rs.blocks.push_back(
        hand_block(s, q_slot, 0, local, k_slot, k0, k0 + half, sim::MaskKind::doc_causal));
    rs.blocks.push_back(
        hand_block(s, q_slot, 0, local, k_slot, k0 + half, k0 + local, sim::MaskKind::doc_causal));
  } else {
    rs.blocks.push_back(
        hand_block(s, q_slot, 0, local, k_slot, k0, k0 + local, sim::MaskKind::doc_causal));
  }
}

inline sim::AttentionSchedule hand_schedule(sim::AttentionAlgo algo, std::int64_t cp,
                                            std::int64_t local,
                                            const std::vector<std::int64_t>& doc_lens,
                                            HandMasks masks, const sim::AttentionShape& shape) {
  sim::AttentionSchedule s;
  s.shape = shape;
  const std::int64_t heads = shape.heads;
  s.layout = hand_layout();
  s.algo = algo;
  s.cp = cp;
  s.padded_len = cp * local;
  s.ring_degree = algo == sim::AttentionAlgo::ring ? cp : 1;
  for (std::int64_t r = 0; r < cp; ++r) s.index.push_back(contiguous_index(r, local));
  fill_documents(s, doc_lens);
  const std::int64_t steps = algo == sim::AttentionAlgo::ring ? cp : 1;
  for (std::int64_t step = 0; step < steps; ++step) {
    sim::ScheduleStep st;
    st.exchange = algo == sim::AttentionAlgo::ring
                      ? (step == 0 ? sim::Exchange::none : sim::Exchange::send_recv)
                      : sim::Exchange::all_gather;
    for (std::int64_t r = 0; r < cp; ++r) {
      sim::RankStep rs;
      rs.rank = r;
      rs.heads = heads;
      rs.queries = {{.rank = r, .local = {0, local}}};
      if (algo == sim::AttentionAlgo::ring) {
        rs.kv_from = (r - step + cp) % cp;
        rs.keys = {{.rank = rs.kv_from, .local = {0, local}}};
        add_blocks(s, rs, r, rs.kv_from, 0, masks);
      } else {
        for (std::int64_t from = 0; from < cp; ++from) {
          rs.keys.push_back({.rank = from, .local = {0, local}});
          add_blocks(s, rs, r, from, from * local, masks);
        }
      }
      for (const auto& b : rs.blocks) rs.work += b.pairs * heads;
      st.ranks.push_back(rs);
    }
    s.steps.push_back(st);
  }
  return s;
}

}  // namespace cplab::gputest
