#pragma once
// The layout table's closed form against an index map SPEC §9 writes out: each layout's own test
// file (tests/properties/layouts/ID_test.cpp) checks its examples with it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "layouts/magi.hpp"
#include "properties/layout_table.hpp"
#include "reference/plan.hpp"

namespace cplab::properties {

// The reference's row of `layout` at C = cp (magi's K = chunk_size) and the entry's closed form of
// it both give `expected`, rank by rank; the closed form's owner of every slot is where it sits.
inline void expect_maps(const std::string& layout, std::int64_t cp, std::int64_t seq_len,
                        const std::vector<std::int64_t>* docs,
                        const std::vector<std::vector<std::int64_t>>& expected,
                        std::int64_t chunk_size = 512) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::magi_chunk_size.set(spec, chunk_size);
  const RowPlan row = reference::plan_row(spec, seq_len, docs);
  ASSERT_EQ(row.index.size(), expected.size());
  const sim::LayoutMap map = reference_map(layout_entry(layout), row);
  for (std::size_t r = 0; r < expected.size(); ++r) {
    EXPECT_EQ(row.index[r], expected[r]) << layout << " rank " << r;
    for (std::size_t k = 0; k < expected[r].size(); ++k) {
      EXPECT_EQ(map.global_index(static_cast<std::int64_t>(r), static_cast<std::int64_t>(k)),
                expected[r][k]);
      const index_math::Slot owner = map.owner(expected[r][k]);
      EXPECT_EQ(owner.rank, static_cast<std::int64_t>(r));
      EXPECT_EQ(owner.offset, static_cast<std::int64_t>(k));
    }
  }
}

}  // namespace cplab::properties
