// thd on the twin: its closed-form map's refusal of bounds it cannot index, SPEC §9 example 4's
// work figures (documents balanced, the document-major bug not), the hooks only its document
// re-lay shows a bug through, and its CP attention schedule's document boundaries.
#include <gtest/gtest.h>

#include "layouts/cost_model.hpp"
#include "layouts/layout_map.hpp"
#include "tests/sim/checks.hpp"
#include "tests/sim/hooks_fixtures.hpp"
#include "tests/sim/schedule_fixtures.hpp"

namespace cplab::simtest {
namespace {

using sim::SimImplementation;

sim::MicrobatchRows one_row(std::int64_t len, std::vector<std::int64_t> docs = {}) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  rows.packed = !docs.empty();
  rows.seq_lens = std::move(docs);
  return rows;
}

std::vector<std::int64_t> work_of(const std::vector<sim::RankCost>& costs) {
  std::vector<std::int64_t> work;
  for (const auto& cost : costs) work.push_back(cost.causal_work);
  return work;
}

TEST(LayoutMap, thd_refuses_bounds_its_form_cannot_index) {
  const auto& thd = sim::layout_descriptor("thd");
  EXPECT_NE(error_of([&] {
              sim::LayoutMap(thd, 2, 8, MapParams{{0, 3, 8}, 0});
            }).find("not a multiple of 2C=4"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::LayoutMap(thd, 2, 8, MapParams{{0, 8, 4}, 0}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(thd, 2, 8, MapParams{}); }), "");
}

// SPEC §9 example 4's known bug: per-document chunk lists concatenated document-major (doc i:
// rank 0's two chunks, rank 1's, ...) and the flattened stream cut into C equal pieces.
class DocumentMajorThd : public sim::PartitionRules {
 public:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    const Ints& bounds = stream.doc_bounds;
    Ints flat;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const std::int64_t len = bounds[i + 1] - bounds[i];
      const sim::LayoutMap one(map.layout(), cp, len, MapParams{.table = {0, len}});
      for (std::int64_t r = 0; r < cp; ++r) {
        for (std::int64_t g : one.local_index(r)) flat.push_back(bounds[i] + g);
      }
    }
    const std::int64_t piece = bounds.back() / cp;
    return Ints(flat.begin() + rank * piece, flat.begin() + (rank + 1) * piece);
  }
};

TEST(CostModelExamples, thd_balances_documents_and_document_major_does_not) {
  EXPECT_EQ(work_of(sim::rank_costs(spec_for("thd", 2), one_row(16, {4, 12}))), (Ints{44, 44}));
  EXPECT_EQ(
      work_of(sim::rank_costs(spec_for("thd", 2), one_row(16, {4, 12}), {}, DocumentMajorThd{})),
      (Ints{26, 62}));
}

// Per-document chunk lists concatenated document-major, the flattened stream cut into C pieces.
class ThdDocumentMajor : public SimImplementation {
 protected:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1 || !stream.relaid) return SimImplementation::local_index(stream, map, rank);
    const Ints& bounds = stream.doc_bounds;
    Ints flat;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const std::int64_t len = bounds[i + 1] - bounds[i];
      const sim::LayoutMap one(map.layout(), cp, len, MapParams{.table = {0, len}});
      for (std::int64_t r = 0; r < cp; ++r) {
        for (std::int64_t g : one.local_index(r)) flat.push_back(bounds[i] + g);
      }
    }
    const std::int64_t piece = bounds.back() / cp;
    return Ints(flat.begin() + rank * piece, flat.begin() + (rank + 1) * piece);
  }
};

class ThdUnpaddedCuSeqlens : public SimImplementation {
 protected:
  Ints local_cu_seqlens(const Ints&, const Ints& cu_real, std::int64_t cp) const override {
    Ints local;
    for (std::int64_t bound : cu_real) local.push_back(bound / cp);
    return local;
  }
};

class ThdLengthRoundedDown : public SimImplementation {
 protected:
  std::int64_t document_slots(std::int64_t n, std::int64_t unit) const override {
    return n / unit * unit;
  }
};

TEST(LayoutHooks, thd_document_major) {
  ThdDocumentMajor variant;
  EXPECT_NE(check_shard_against_reference(spec_for("thd", 2), packed_batch({{4, 12}}, 16), variant),
            "");
}

TEST(LayoutHooks, thd_unpadded_cu_seqlens) {
  ThdUnpaddedCuSeqlens variant;
  EXPECT_NE(
      check_shard_against_reference(spec_for("thd", 2), docs_5_3_8(), variant).find("cu_seqlens"),
      std::string::npos);
}

TEST(LayoutHooks, thd_document_length_rounded_down) {
  ThdLengthRoundedDown variant;
  EXPECT_NE(check_shard_against_reference(spec_for("thd", 2), docs_5_3_8(), variant), "");
}

}  // namespace
}  // namespace cplab::simtest

namespace cplab::sim {
namespace {

using namespace schedule_test;

// thd, documents 4 and 8 at C = 2: rank 0 holds [0] [3] of document 1 and [4,5] [10,11] of
// document 2; slots 3 and 4 meet but belong to two documents, so no block crosses them.
TEST(AttentionSchedule, ThdRespectsDocumentBoundaries) {
  const LayoutSpec spec = spec_of("thd", 2);
  const RowPlan row = packed_row(spec, {4, 8});
  ASSERT_EQ(row.index[0], (std::vector<std::int64_t>{0, 3, 4, 5, 10, 11}));
  const AttentionSchedule s = schedule_of(spec, row, AttentionAlgo::ring);
  // A single query and key, the key at or before it: full.
  expect_blocks(s.steps[0].ranks[0], {{{0, 1}, {0, 1}, MaskKind::full, 0, 1},
                                      {{1, 2}, {0, 1}, MaskKind::full, 0, 1},
                                      {{1, 2}, {1, 2}, MaskKind::full, 0, 1},
                                      {{2, 4}, {2, 4}, MaskKind::causal, 0, 3},
                                      {{4, 6}, {2, 4}, MaskKind::full, 0, 4},
                                      {{4, 6}, {4, 6}, MaskKind::causal, 0, 3}});
  std::int64_t pairs = 0;
  for (const ScheduleStep& step : s.steps)
    for (const RankStep& rank : step.ranks)
      for (const ScheduleBlock& b : rank.blocks) pairs += b.pairs;
  EXPECT_EQ(pairs, 4 * 5 / 2 + 8 * 9 / 2);
  for (const ScheduleStep& step : s.steps) EXPECT_EQ(step.ranks[0].work, step.ranks[1].work);
}

}  // namespace
}  // namespace cplab::sim
