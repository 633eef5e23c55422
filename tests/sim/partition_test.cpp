// The rank-local partition (closed form, from metadata) against the reference's plan (by
// construction) for every layout, C and batch shape; and the closed-form maps' inverses.
#include "layouts/partition.hpp"

#include <gtest/gtest.h>

#include "layouts/layout_map.hpp"
#include "support.hpp"

namespace cplab::simtest {
namespace {

class PartitionTest : public ::testing::TestWithParam<LayoutCp> {};

// Compares what rank r records for microbatch m with the reference plan's rows of m.
void expect_layout_matches(const ShardPlan& plan, const ShardLayout& mine, std::int64_t m,
                           std::int64_t r) {
  const std::int64_t per = plan.rows_per_microbatch();
  ASSERT_EQ(mine.rows, per);
  for (std::int64_t b = 0; b < per; ++b) {
    const RowPlan& row = plan.rows[static_cast<std::size_t>(m * per + b)];
    SCOPED_TRACE(::testing::Message() << "microbatch " << m << " row " << b << " rank " << r);
    EXPECT_EQ(mine.padded_len, row.padded_len);
    EXPECT_EQ(mine.original_len, row.original_len);
    EXPECT_EQ(mine.caller_len, row.caller_len);
    EXPECT_EQ(mine.index[b], row.index[r]);
    EXPECT_EQ(mine.caller_pos[b], select(row.caller_pos, row.index[r]));
    EXPECT_EQ(mine.positions[b], select(row.positions, row.index[r]));
    EXPECT_EQ(mine.doc_ids[b], select(row.doc_ids, row.index[r]));
    EXPECT_EQ(mine.real[b], select(row.real, row.index[r]));
    EXPECT_EQ(mine.valid_tokens[b], row.valid_tokens[r]);
    if (row.local_cu_seqlens.empty()) {
      EXPECT_TRUE(mine.cu_seqlens.empty());
    } else {
      ASSERT_EQ(mine.cu_seqlens.size(), static_cast<std::size_t>(per));
      EXPECT_EQ(mine.cu_seqlens[b], row.local_cu_seqlens[r]);
    }
    if (row.packed) {
      EXPECT_EQ(mine.cu_seqlens_padded[b], row.cu_seqlens_padded);
    }
  }
}

TEST_P(PartitionTest, rank_partition_equals_reference_plan) {
  const auto& [layout, cp] = GetParam();
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    ShardPlan plan;
    const std::string reference_error = error_of([&] { plan = reference::plan(spec, c.batch); });
    std::vector<sim::MicrobatchRows> micro;
    const std::string sim_error = error_of([&] {
      micro = sim::microbatch_rows(spec, c.batch);
      for (const auto& rows : micro) sim::partition_rank(spec, 0, rows);
    });
    // Both refuse the same cases (identity at C > 1, thd on BSHD rows) or both plan.
    ASSERT_EQ(reference_error.empty(), sim_error.empty())
        << "reference: " << reference_error << "\nsim: " << sim_error;
    if (!reference_error.empty()) continue;
    ASSERT_EQ(static_cast<std::int64_t>(micro.size()), spec.microbatches);
    for (std::int64_t m = 0; m < spec.microbatches; ++m) {
      for (std::int64_t r = 0; r < cp; ++r) {
        expect_layout_matches(plan, sim::partition_rank(spec, r, micro[m]), m, r);
      }
    }
  }
}

TEST_P(PartitionTest, closed_form_owner_inverts_global_index) {
  const auto& [layout, cp] = GetParam();
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    std::vector<sim::MicrobatchRows> micro;
    if (!error_of([&] {
           micro = sim::microbatch_rows(spec, c.batch);
           sim::partition_rank(spec, 0, micro[0]);
         }).empty())
      continue;
    const ShardPlan plan = reference::plan(spec, c.batch);
    for (std::int64_t m = 0; m < spec.microbatches; ++m) {
      const ShardLayout mine = sim::partition_rank(spec, 0, micro[m]);
      const sim::LayoutMap map = sim::LayoutMap::of(mine, 0);
      const RowPlan& row = plan.rows[static_cast<std::size_t>(m * plan.rows_per_microbatch())];
      std::vector<int> seen(static_cast<std::size_t>(map.padded_len()), 0);
      for (std::int64_t r = 0; r < cp; ++r) {
        for (std::int64_t k = 0; k < map.local_len(); ++k) {
          const std::int64_t g = map.global_index(r, k);
          ASSERT_EQ(g, row.index[r][k]) << "rank " << r << " token " << k;
          const index_math::Slot slot = map.owner(g);
          ASSERT_EQ(slot.rank, r) << "owner of slot " << g;
          ASSERT_EQ(slot.offset, k) << "offset of slot " << g;
          ++seen[g];
        }
      }
      for (std::size_t g = 0; g < seen.size(); ++g) ASSERT_EQ(seen[g], 1) << "slot " << g;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, PartitionTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

}  // namespace
}  // namespace cplab::simtest
