// The attention matrix picture (reports/attention_matrix_svg.hpp): every pair the mask allows is
// one cell, coloured by the rank that computes it and labelled with the ring step that does, and
// nothing else is coloured; documents are drawn; the small multiples split the pairs by step.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_mask.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"
#include "reports/attention_matrix_svg.hpp"
#include "tests/reports/svg_reader.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

// A plainly sharding layout's ring at C = 2 on `row`, under `mask`.
sim::AttentionSchedule ring_of(const LayoutSpec& spec, const RowPlan& row,
                               const std::string& mask) {
  return sim::build_schedule(
      sim::layout_descriptor(spec.layout), spec, row, sim::AttentionAlgo::ring,
      {.heads = 1, .kv_heads = 1, .head_dim = 4, .dtype = DType::f32}, sim::parse_mask(mask));
}

LayoutSpec plain_spec() {
  LayoutSpec spec;
  spec.layout = testsupport::a_plain_layout();
  spec.cp = 2;
  return spec;
}

// The cells of the picture, each (q, k, rank, step).
struct MatrixCell {
  std::int64_t q, k, rank, step;
};
std::vector<MatrixCell> cells_of(const SvgDocument& doc) {
  std::vector<MatrixCell> cells;
  for (const SvgElement& e : doc.elements) {
    if (e.name != "g" || e.attr("data-rank").empty()) continue;
    cells.push_back({std::stoll(e.attr("data-q")), std::stoll(e.attr("data-k")),
                     std::stoll(e.attr("data-rank")), std::stoll(e.attr("data-step"))});
  }
  return cells;
}

// Rank r holds slots [r·ℓ, (r + 1)·ℓ) and at ring step t the keys of rank (r - t) mod C: the
// pair (q, k) is computed by q's rank at step (owner(q) - owner(k)) mod C.
void expect_the_ring_computes_exactly_the_mask(const sim::AttentionSchedule& s,
                                               std::int64_t pairs) {
  const SvgDocument doc = read_svg(reports::attention_matrix_svg(s, "t", false));
  ASSERT_TRUE(doc.error.empty()) << doc.error;
  const std::vector<MatrixCell> cells = cells_of(doc);
  EXPECT_EQ(static_cast<std::int64_t>(cells.size()), pairs) << sim::mask_text(s.mask);
  const std::int64_t local = s.local_len();
  for (const MatrixCell& c : cells) {
    EXPECT_TRUE(sim::mask_visible(s.mask.rule(), s.facts[static_cast<std::size_t>(c.q)],
                                  s.facts[static_cast<std::size_t>(c.k)]))
        << c.q << " × " << c.k;
    EXPECT_EQ(c.rank, c.q / local) << c.q << " × " << c.k;
    EXPECT_EQ(c.step, (c.q / local - c.k / local + s.cp) % s.cp) << c.q << " × " << c.k;
  }
}

TEST(AttentionMatrix, EachMaskedPairIsOneCellOfTheRankAndStepThatComputeIt) {
  const LayoutSpec spec = plain_spec();
  const RowPlan row = reference::plan_row(spec, 8);
  expect_the_ring_computes_exactly_the_mask(ring_of(spec, row, "causal"), 36);
  expect_the_ring_computes_exactly_the_mask(ring_of(spec, row, "window:3"), 1 + 2 + 6 * 3);
  expect_the_ring_computes_exactly_the_mask(ring_of(spec, row, "chunked:3"), 6 + 6 + 3);
  // Span [2, 6) sees itself whole: 4·4 pairs, of which 10 causal ones already count.
  expect_the_ring_computes_exactly_the_mask(ring_of(spec, row, "bidirectional:2-6"), 36 + 6);
}

TEST(AttentionMatrix, DocumentsAreDrawnAndNoPairCrossesThem) {
  const LayoutSpec spec = plain_spec();
  const std::vector<std::int64_t> docs = {3, 5};
  const RowPlan row = reference::plan_row(spec, 8, &docs);
  const sim::AttentionSchedule s = ring_of(spec, row, "causal");
  expect_the_ring_computes_exactly_the_mask(s, 6 + 15);
  const SvgDocument doc = read_svg(reports::attention_matrix_svg(s, "t", false));
  std::int64_t lines = 0;
  for (const SvgElement& e : doc.elements) lines += e.name == "line" ? 1 : 0;
  EXPECT_EQ(lines, 2) << "one document boundary, across and down";
}

TEST(AttentionMatrix, SmallMultiplesSplitThePairsByStep) {
  const LayoutSpec spec = plain_spec();
  const sim::AttentionSchedule s = ring_of(spec, reference::plan_row(spec, 8), "causal");
  const SvgDocument doc = read_svg(reports::attention_matrix_svg(s, "t", true));
  ASSERT_TRUE(doc.error.empty()) << doc.error;
  const std::vector<MatrixCell> cells = cells_of(doc);
  ASSERT_EQ(cells.size(), 2u * 36u) << "the whole matrix, then each step's";
  std::int64_t step1 = 0;
  for (std::size_t i = 36; i < cells.size(); ++i) step1 += cells[i].step == 1 ? 1 : 0;
  EXPECT_EQ(step1, 4 * 4) << "step 1: rank 1's queries against rank 0's keys";
}

TEST(AttentionMatrix, PastItsCellsACellIsABlockOfSlots) {
  const LayoutSpec spec = plain_spec();
  const sim::AttentionSchedule s =
      ring_of(spec, reference::plan_row(spec, 4 * reports::kMatrixCells), "causal");
  const std::vector<MatrixCell> cells =
      cells_of(read_svg(reports::attention_matrix_svg(s, "t", false)));
  const auto n = reports::kMatrixCells;
  EXPECT_EQ(static_cast<std::int64_t>(cells.size()), n * (n + 1) / 2);
}

}  // namespace
}  // namespace cplab::testing
