#pragma once
// Helpers of the CP attention schedule tests (SPEC §13): the generic ones
// (attention_schedule_test.cpp) and each layout's worked schedules (layouts/ID_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/usp.hpp"
#include "reference/plan.hpp"

namespace cplab::sim::schedule_test {

inline LayoutSpec spec_of(const std::string& layout, std::int64_t cp,
                          std::int64_t ring_degree = 1) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::usp_ring_degree.set(spec, ring_degree);
  return spec;
}

inline AttentionSchedule schedule_of(const LayoutSpec& spec, const RowPlan& row, AttentionAlgo algo,
                                     const AttentionShape& shape = {}) {
  return build_schedule(layout_descriptor(spec.layout), spec, row, algo, shape);
}

inline RowPlan causal_row(const LayoutSpec& spec, std::int64_t seq_len) {
  return reference::plan_row(spec, seq_len);
}

inline RowPlan packed_row(const LayoutSpec& spec, std::vector<std::int64_t> docs) {
  std::int64_t total = 0;
  for (std::int64_t d : docs) total += d;
  return reference::plan_row(spec, total, &docs);
}

struct Expected {
  LocalRange q, k;
  MaskKind mask;
  std::int64_t diagonal, pairs;
};

inline void expect_blocks(const RankStep& rank, const std::vector<Expected>& want) {
  ASSERT_EQ(rank.blocks.size(), want.size()) << "rank " << rank.rank;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const ScheduleBlock& b = rank.blocks[i];
    EXPECT_EQ(b.q, want[i].q) << "rank " << rank.rank << " block " << i;
    EXPECT_EQ(b.k, want[i].k) << "rank " << rank.rank << " block " << i;
    EXPECT_EQ(b.mask, want[i].mask) << "rank " << rank.rank << " block " << i;
    if (b.mask == MaskKind::causal) {
      EXPECT_EQ(b.diagonal, want[i].diagonal) << "block " << i;
    }
    EXPECT_EQ(b.pairs, want[i].pairs) << "rank " << rank.rank << " block " << i;
  }
}

}  // namespace cplab::sim::schedule_test
