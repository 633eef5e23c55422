// magi (SPEC §3.5): the worked examples of §9.5 and §9.6 by the reference and through `cplab
// layout`; its row facts, its load bound and its refusals.
#include "layouts/magi.hpp"

#include <algorithm>

#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

TEST(SpecExample5, MagiOneCausalDocument) {
  const RowPlan row = plan_row(make_spec("magi", 4), 32);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 42, 58, 74, 90, 106, 122}));
  for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(row.map_costs[j], 16 * j + 10);
  // The assignment, rank-major: rank 0 {0, 7}, rank 1 {1, 6}, rank 2 {2, 5}, rank 3 {3, 4}.
  EXPECT_EQ(row.map.table, (Ints{0, 7, 1, 6, 2, 5, 3, 4}));
  EXPECT_EQ(causal_work(row), (Ints{132, 132, 132, 132}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
}

TEST(SpecExample6, MagiTwoDocumentsOf8And24) {
  const Ints docs{8, 24};
  const RowPlan row = plan_row(make_spec("magi", 4), sum(docs), &docs);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 10, 26, 42, 58, 74, 90}));
  EXPECT_EQ(row.map.table, (Ints{0, 7, 2, 6, 1, 5, 3, 4}));  // rank-major, two chunks each
  Ints loads;
  for (std::size_t r = 0; r < 4; ++r)
    loads.push_back(row.map_costs[row.map.table[2 * r]] + row.map_costs[row.map.table[2 * r + 1]]);
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_EQ(causal_work(row), loads);
}

using I32s = std::vector<std::int32_t>;

TEST(RowFacts, MagiPositionsAreStreamIndices) {
  LayoutSpec spec = make_spec("magi", 2);
  layouts::magi_chunk_size.set(spec, 2);
  const Ints docs{3, 3};
  const RowPlan row = plan_row(spec, 6, &docs);
  EXPECT_EQ(row.padded_len, 8);
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 2, 2, 2, 0, 0}));
  EXPECT_EQ(row.map_costs, (Ints{3, 4, 5, 0}));  // chunk 1: 3 (doc 1) + 1 (doc 2)
}

TEST(RowFacts, MagiAtCp1PadsNothing) {
  EXPECT_EQ(plan_row(make_spec("magi", 1), 7).padded_len, 7) << "not padded to K = 4";
}

TEST(LoadBalance, MagiMaxAreaWithinBound) {
  for (std::int64_t cp : {2, 3, 4}) {
    for (const Ints& docs : std::vector<Ints>{{8, 24}, {3, 17, 5, 1}, {40}, {9, 9, 9, 9, 9}}) {
      const RowPlan row = plan_row(make_spec("magi", cp), sum(docs), &docs);
      const Ints work = causal_work(row);
      const std::int64_t total = sum(work);
      EXPECT_EQ(total, sum(row.map_costs));
      const std::int64_t largest = *std::max_element(row.map_costs.begin(), row.map_costs.end());
      EXPECT_LE(*std::max_element(work.begin(), work.end()) * cp, total + largest * cp)
          << "cp=" << cp << " docs=" << ::testing::PrintToString(docs);
    }
  }
}

TEST(SpecErrors, MagiChunkSizeNamesTheBadValue) {
  LayoutSpec spec = make_spec("magi", 2);
  layouts::magi_chunk_size.set(spec, -3);
  EXPECT_ERROR(validate_spec(spec), "chunk_size=-3");
}

TEST(PlanErrors, MagiPinnedLengthThatCannotWork) {
  EXPECT_ERROR(plan_row(make_spec("magi", 1), 6, nullptr, nullptr, 8), "L=6", "L=8");
}

// SPEC §9.5 and §9.6 through `cplab layout`.
TEST(CliLayout, Example5And6Magi) {
  auto out = layout_json("--layout magi --cp 4 --chunk-size 4 --seq-len 32");
  EXPECT_EQ(indices(out)[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
  for (const auto& rank : out["ranks"]) EXPECT_EQ(rank["causal_work"], 132);
  out = layout_json("--layout magi --cp 4 --chunk-size 4 --doc-lens 8,24");
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 2, 3, 28, 29, 30, 31},
                                             {8, 9, 10, 11, 24, 25, 26, 27},
                                             {4, 5, 6, 7, 20, 21, 22, 23},
                                             {12, 13, 14, 15, 16, 17, 18, 19}}));
  Ints loads;
  for (const auto& rank : out["ranks"]) loads.push_back(rank["causal_work"].get<std::int64_t>());
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_NEAR(out["imbalance"].get<double>(), 100.0 / 84.0, 1e-12);
}

}  // namespace
}  // namespace cplab::testing
