// magi on the twin: its LayoutMap (the inverse assignment it derives once, the refusal of tables it
// cannot index, what its closed form answers), the tie-break hook only its balancing shows, and
// SPEC §9 examples 5 and 6: the closed-form areas and heap assignment against the counted ones.
#include "layouts/magi.hpp"

#include <gtest/gtest.h>

#include "layouts/layout_map.hpp"
#include "layouts/partition.hpp"
#include "tests/sim/checks.hpp"
#include "tests/sim/hooks_fixtures.hpp"

namespace cplab::simtest {
namespace {

using sim::SimImplementation;

TEST(LayoutMap, magi_inverse_makes_owner_the_inverse_of_global_index) {
  // SPEC example 5: ranks get chunks [0,7] [1,6] [2,5] [3,4], K = 4.
  const sim::LayoutMap map(sim::layout_descriptor("magi"), 4, 32,
                           MapParams{.table = {0, 7, 1, 6, 2, 5, 3, 4}, .unit = 4});
  EXPECT_EQ(map.aux(), (Ints{0, 2, 4, 6, 7, 5, 3, 1}));
  EXPECT_EQ(map.global_index(0, 4), 28);  // r0 idx = [0,1,2,3,28,29,30,31]
  for (std::int64_t r = 0; r < 4; ++r) {
    for (std::int64_t k = 0; k < map.local_len(); ++k) {
      const index_math::Slot s = map.owner(map.global_index(r, k));
      EXPECT_EQ(s.rank, r);
      EXPECT_EQ(s.offset, k);
    }
  }
  const sim::LayoutMap copy = map;  // its view points into its own arrays
  EXPECT_NE(copy.view().table, map.view().table);
  EXPECT_EQ(copy.local_index(3), map.local_index(3));
}

TEST(LayoutMap, magi_refuses_parameters_its_form_cannot_index) {
  const auto& magi = sim::layout_descriptor("magi");
  EXPECT_NE(error_of([&] {
              sim::LayoutMap(magi, 2, 8, MapParams{{0, 1, 1, 3}, 2});
            }).find("chunk 1 is assigned twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 8, MapParams{{0, 4, 2, 3}, 2}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 6, MapParams{{0, 1, 2}, 2}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 8, MapParams{{0, 1, 2, 3}, 0}); }), "");
}

// The closed forms are an implementation's: what one answers is checked before anything indexes
// by it. magi's descriptor with its parameter check gone (prepare = nullptr) hands its form wrong
// parameters: a chunk past the stream, a chunk twice.
TEST(LayoutMap, checks_what_its_closed_form_answers) {
  sim::LayoutDescriptor magi = sim::layout_descriptor("magi");
  magi.map.prepare = nullptr;
  const sim::LayoutMap past(magi, 2, 8, MapParams{.table = {0, 4, 2, 3}, .unit = 2});
  EXPECT_NE(error_of([&] {
              past.global_index(0, 2);
            }).find("magi closed form: global_index(0, 2) = 8, outside the stream [0, L=8)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              past.local_index(0);
            }).find("magi closed form: rank 0's index map: entry 2 is 8, outside [0, 8)"),
            std::string::npos);
  const sim::LayoutMap twice(magi, 2, 8, MapParams{.table = {0, 0, 1, 3}, .unit = 2});
  EXPECT_NE(error_of([&] {
              twice.local_index(0);
            }).find("rank 0's index map: entry 2 is 0, a slot an earlier entry already names"),
            std::string::npos);
}

class MagiTiesLowerFirst : public SimImplementation {
 protected:
  bool balance_precedes(std::int64_t area_a, std::int64_t a, std::int64_t area_b,
                        std::int64_t b) const override {
    return area_a != area_b ? area_a > area_b : a < b;
  }
};

TEST(LayoutHooks, magi_ties_broken_the_other_way) {
  MagiTiesLowerFirst variant;
  LayoutSpec spec = spec_for("magi", 4);
  layouts::magi_chunk_size.set(spec, 4);  // SPEC §9 example 6: equal areas 10, 10 and 26, 26
  EXPECT_NE(
      check_shard_against_reference(spec, packed_batch({{8, 24}}, 32), variant).find("index map"),
      std::string::npos);
}

TEST(MagiPartition, closed_form_areas_and_heap_assignment_equal_the_counted_ones) {
  for (std::int64_t cp : cp_sizes()) {
    if (cp == 1) continue;  // magi at C = 1 is the identity: no chunks
    for (const BatchCase& c : batch_cases()) {
      SCOPED_TRACE(::testing::Message() << c.name << " cp " << cp);
      const LayoutSpec spec = spec_for("magi", cp, c.microbatches);
      const ShardPlan plan = reference::plan(spec, c.batch);
      const auto micro = sim::microbatch_rows(spec, c.batch);
      for (std::int64_t m = 0; m < spec.microbatches; ++m) {
        const sim::RowStream stream = sim::row_stream(spec, micro[m]);
        const RowPlan& row = plan.rows[static_cast<std::size_t>(m * plan.rows_per_microbatch())];
        EXPECT_EQ(stream.map_costs, row.map_costs);
        EXPECT_EQ(stream.map, row.map);
      }
    }
  }
}

// SPEC §9 examples 5 and 6, worked by hand.
TEST(MagiAssignment, spec_example_one_causal_document) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = 32;
  LayoutSpec spec = spec_for("magi", 4);
  layouts::magi_chunk_size.set(spec, 4);
  const sim::RowStream stream = sim::row_stream(spec, rows);
  const Ints& areas = stream.map_costs;
  ASSERT_EQ(areas.size(), 8U);
  for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(areas[j], 16 * j + 10) << "chunk " << j;
  const std::vector<Ints> expected = {{0, 7}, {1, 6}, {2, 5}, {3, 4}};
  EXPECT_EQ(sim::greedy_assign(areas, 4), expected);
  EXPECT_EQ(stream.map.table, (Ints{0, 7, 1, 6, 2, 5, 3, 4}));  // rank-major
  EXPECT_EQ(stream.map.unit, 4);
}

TEST(MagiAssignment, spec_example_two_documents) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = 32;
  rows.packed = true;
  rows.seq_lens = {8, 24};
  LayoutSpec spec = spec_for("magi", 4);
  layouts::magi_chunk_size.set(spec, 4);
  const sim::RowStream s4 = sim::row_stream(spec, rows);
  EXPECT_EQ(s4.map_costs, (Ints{10, 26, 10, 26, 42, 58, 74, 90}));
  EXPECT_EQ(s4.map.table, (Ints{0, 7, 2, 6, 1, 5, 3, 4}));
}

}  // namespace
}  // namespace cplab::simtest
