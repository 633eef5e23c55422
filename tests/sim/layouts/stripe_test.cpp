// stripe (SPEC §3.6): the worked examples of SPEC §9.9 by the reference, at g = 1 and in stripes of
// g > 1 tokens, the twin's closed-form map against them (every rank's k-th slot and every slot's
// owner), and its CP ring schedule's shifted diagonal.
#include "layouts/stripe.hpp"

#include <gtest/gtest.h>

#include "layouts/layout_map.hpp"
#include "layouts/partition.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/sim/schedule_fixtures.hpp"
#include "tests/sim/support.hpp"

namespace cplab::simtest {
namespace {

LayoutSpec stripe_spec(std::int64_t cp, std::int64_t granularity = 1) {
  LayoutSpec spec;
  spec.layout = "stripe";
  spec.cp = cp;
  layouts::stripe_granularity.set(spec, granularity);
  return spec;
}

template <typename T>
Ints local_values(const RowPlan& row, const std::vector<T>& values, std::size_t rank) {
  Ints out;
  for (std::int64_t g : row.index[rank]) out.push_back(values[static_cast<std::size_t>(g)]);
  return out;
}

// The twin's map, built from what the reference recorded, agrees with the reference slot by slot.
void expect_closed_form(const LayoutSpec& spec, const RowPlan& row) {
  const sim::LayoutMap map(sim::layout_descriptor("stripe"), spec.cp, row.padded_len, row.map);
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    for (std::int64_t k = 0; k < row.local_len(); ++k) {
      const std::int64_t g = row.index[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
      EXPECT_EQ(map.global_index(r, k), g) << "rank " << r << " slot " << k;
      const index_math::Slot owner = map.owner(g);
      EXPECT_EQ(owner.rank, r) << "slot " << g;
      EXPECT_EQ(owner.offset, k) << "slot " << g;
    }
  }
}

TEST(StripeExamples, SixteenTokensOnFourRanks) {
  const LayoutSpec spec = stripe_spec(4);
  const RowPlan row = reference::plan_row(spec, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  EXPECT_EQ(reference::causal_work(row), (Ints{28, 32, 36, 40}));
  expect_closed_form(spec, row);
}

TEST(StripeExamples, TenTokensPadToTwelve) {
  const LayoutSpec spec = stripe_spec(4);
  const RowPlan row = reference::plan_row(spec, 10);
  EXPECT_EQ(row.padded_len, 12);
  EXPECT_EQ(row.index[2], (Ints{2, 6, 10}));
  EXPECT_EQ(row.valid_tokens, (Ints{3, 3, 2, 2}));
  expect_closed_form(spec, row);
}

TEST(StripeExamples, PackedDocumentsFiveAndThree) {
  const LayoutSpec spec = stripe_spec(2);
  const Ints docs = {5, 3};
  const RowPlan row = reference::plan_row(spec, 8, &docs);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 2, 4, 1}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{1, 3, 0, 2}));
  EXPECT_EQ(local_values(row, row.doc_ids, 0), (Ints{1, 1, 1, 2}));
  EXPECT_EQ(local_values(row, row.doc_ids, 1), (Ints{1, 1, 2, 2}));
  EXPECT_EQ(reference::causal_work(row), (Ints{11, 10}));
  expect_closed_form(spec, row);
}

TEST(StripeExamples, StripesOfTwoOnTwoRanks) {
  const LayoutSpec spec = stripe_spec(2, 2);
  const RowPlan row = reference::plan_row(spec, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 4, 5, 8, 9, 12, 13}, {2, 3, 6, 7, 10, 11, 14, 15}}));
  // C·g²·J(J-1)/2 + J·g²·r + J·g(g+1)/2 with J = 4 stripes a rank: 60 and 76.
  EXPECT_EQ(reference::causal_work(row), (Ints{60, 76}));
  EXPECT_EQ(row.map.unit, 2);
  expect_closed_form(spec, row);
}

TEST(StripeExamples, StripesPadToAMultipleOfCTimesG) {
  const RowPlan row = reference::plan_row(stripe_spec(2, 2), 10);
  EXPECT_EQ(row.padded_len, 12);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 4, 5, 8, 9}, {2, 3, 6, 7, 10, 11}}));
  EXPECT_EQ(row.valid_tokens, (Ints{6, 4}));
  expect_closed_form(stripe_spec(2, 2), row);
  // g = ℓ is contiguous: one stripe a rank.
  const RowPlan whole = reference::plan_row(stripe_spec(3, 4), 12);
  EXPECT_EQ(whole.index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}));
}

TEST(StripeExamples, StripesKeepPackedDocumentsAtTheirOffsets) {
  const LayoutSpec spec = stripe_spec(2, 3);
  const Ints docs = {5, 4};
  const RowPlan row = reference::plan_row(spec, 9, &docs);
  EXPECT_EQ(row.padded_len, 12);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 2, 6, 7, 8}, {3, 4, 5, 9, 10, 11}}));
  EXPECT_EQ(local_values(row, row.doc_ids, 0), (Ints{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{3, 4, 0, 4, 5, 6}));
  expect_closed_form(spec, row);
}

// A recorded g that does not cut L into C·g stripes is refused before any index is formed.
TEST(StripeMap, RefusesAGranularityThatDoesNotDivide) {
  MapParams params;
  params.unit = 3;
  EXPECT_THROW(sim::LayoutMap(sim::layout_descriptor("stripe"), 2, 16, params), Error);
  params.unit = 0;
  EXPECT_THROW(sim::LayoutMap(sim::layout_descriptor("stripe"), 2, 16, params), Error);
}

// The twin lays the row out itself (no reference in between) and holds the same slots.
TEST(StripeTwin, HoldsTheReferenceSlots) {
  for (const std::int64_t g : {1, 2, 3}) {
    const LayoutSpec spec = stripe_spec(3, g);
    sim::MicrobatchRows rows;
    rows.rows = 1;
    rows.caller_len = 10;
    const sim::RowStream stream = sim::row_stream(spec, rows);
    const RowPlan row = reference::plan_row(spec, 10);
    ASSERT_EQ(stream.padded_len, row.padded_len) << "g=" << g;
    EXPECT_EQ(stream.map.unit, g);
    for (std::int64_t r = 0; r < spec.cp; ++r)
      EXPECT_EQ(sim::local_index(stream, r), row.index[static_cast<std::size_t>(r)])
          << "g=" << g << " rank " << r;
  }
}

}  // namespace
}  // namespace cplab::simtest

namespace cplab::sim {
namespace {

using namespace schedule_test;

// Stripe (whole buffers): rank r's local i is slot i·C + r and a source's key j is j·C + src, so
// the key is at or before the query iff j <= i + floor((r - src) / C): diagonal 0 for a source at
// or before the rank, -1 after it.
TEST(AttentionSchedule, StripeRingHasTheShiftedDiagonal) {
  const LayoutSpec spec = spec_of("stripe", 2);
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 8), AttentionAlgo::ring);
  expect_blocks(s.steps[0].ranks[0], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  expect_blocks(s.steps[0].ranks[1], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  expect_blocks(s.steps[1].ranks[0], {{{0, 4}, {0, 4}, MaskKind::causal, -1, 6}});
  expect_blocks(s.steps[1].ranks[1], {{{0, 4}, {0, 4}, MaskKind::causal, 0, 10}});
  // A padded row: the ranks holding a pad read per-token facts.
  const AttentionSchedule padded = schedule_of(spec, causal_row(spec, 7), AttentionAlgo::ring);
  EXPECT_EQ(padded.steps[0].ranks[0].blocks[0].mask, MaskKind::causal);
  EXPECT_EQ(padded.steps[0].ranks[1].blocks[0].mask, MaskKind::doc_causal);
  EXPECT_EQ(padded.steps[0].ranks[1].blocks[0].pairs, 6);  // slots 1, 3, 5 (7 is the pad)
}

}  // namespace
}  // namespace cplab::sim
