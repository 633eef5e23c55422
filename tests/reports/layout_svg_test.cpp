// The layout picture: well-formed for every layout, one band per rank holding exactly its index
// map in local order, colours that follow the document ids, labels that drop as cells shrink, and
// the work panel. Plans come from the reference, so the picture is checked against the plan.
#include "reports/layout_svg.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reports/layout_svg_fixtures.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

// The cells of each band, in document (= drawing) order, checked to sit inside their rank's band.
std::vector<std::vector<const SvgElement*>> cells_by_rank(const SvgDocument& doc) {
  std::vector<std::vector<const SvgElement*>> out(with_class(doc, "band").size());
  for (const SvgElement* cell : with_class(doc, "cell")) {
    const std::size_t rank = std::stoul(cell->attr("data-rank"));
    EXPECT_LT(rank, out.size());
    if (rank >= out.size()) continue;
    EXPECT_EQ(doc.elements[cell->parent].attr("data-rank"), cell->attr("data-rank"));
    out[rank].push_back(cell);
  }
  return out;
}

TEST(LayoutSvg, WellFormedForEveryLayoutAndC) {
  for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 4})) {
    {
      // A packed row, a BSHD row that does not divide (a layout of packed rows only: one
      // document), and an empty row (which those refuse).
      std::vector<RowPlan> rows;
      rows.push_back(packed_row(layout, cp, {5, 3, 8}));
      if (!testsupport::takes_rows(layout, false)) {
        rows.push_back(packed_row(layout, cp, {13}));
      } else {
        const std::int64_t len = sim::nearest_accepted_len(spec_of(layout, cp), 13);
        rows.push_back(reference::plan_row(spec_of(layout, cp), len));
        rows.push_back(reference::plan_row(spec_of(layout, cp), 0));
      }
      for (const RowPlan& row : rows) {
        const SvgDocument doc = draw(row, "title with <, & and \"quotes\"");
        EXPECT_EQ(doc.error, "") << layout << " cp=" << cp;
      }
    }
  }
}

TEST(LayoutSvg, OneBandPerRankHoldingItsIndexMapInLocalOrder) {
  for (const auto& [layout, cp] : testsupport::layouts_at({2, 3, 4})) {
    SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp);
    const RowPlan row = packed_row(layout, cp, {5, 3, 8});
    const SvgDocument doc = draw(row);
    ASSERT_EQ(doc.error, "");
    const auto cells = cells_by_rank(doc);
    ASSERT_EQ(static_cast<std::int64_t>(cells.size()), row.cp);
    for (std::size_t r = 0; r < cells.size(); ++r) {
      Ints drawn;
      for (const SvgElement* cell : cells[r]) drawn.push_back(std::stoll(cell->attr("data-g")));
      EXPECT_EQ(drawn, row.index[r]) << "rank " << r;
    }
  }
}

TEST(LayoutSvg, ColoursFollowTheDocumentIds) {
  // Every layout at C = 2 and 3: among them document padding (a layout that re-lays documents:
  // 5 → 8, 3 → 4) and row padding (one that pads the row's end: 15 → 18 at C = 3).
  std::set<std::string> kinds_seen;
  for (const auto& [layout, cp] : testsupport::layouts_at({2, 3})) {
    SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp);
    const RowPlan row = packed_row(layout, cp, {5, 3, 7});
    const SvgDocument doc = draw(row);
    ASSERT_EQ(doc.error, "");
    std::map<std::string, std::set<std::string>> fills_of;  // "real 2", "pad 1", "row pad" → fills
    for (const SvgElement* cell : with_class(doc, "cell")) {
      const auto g = std::stoll(cell->attr("data-g"));
      ASSERT_EQ(cell->attr("data-doc"), std::to_string(row.doc_ids[g]));
      const std::string kind = row.real[g]          ? "real " + std::to_string(row.doc_ids[g])
                               : row.doc_ids[g] > 0 ? "pad " + std::to_string(row.doc_ids[g])
                                                    : "row pad";
      fills_of[kind].insert(cell->attr("fill"));
      kinds_seen.insert(kind.substr(0, kind.find(' ')));
      if (row.real[g]) {
        EXPECT_EQ(cell->attr("fill"), reports::document_colour(row.doc_ids[g]));
      }
    }
    std::set<std::string> all;
    for (const auto& [kind, fills] : fills_of) {
      EXPECT_EQ(fills.size(), 1u) << kind << " drawn in several fills";
      EXPECT_TRUE(all.insert(*fills.begin()).second) << kind << " shares its fill";
      if (kind.rfind("real", 0) == 0) continue;
      // Pad fills are hatch patterns that the picture itself defines.
      const std::string fill = *fills.begin();
      ASSERT_EQ(fill.rfind("url(#", 0), 0u) << kind << ": " << fill;
      const std::string id = fill.substr(5, fill.size() - 6);
      bool defined = false;
      for (const auto& e : doc.elements) defined |= e.name == "pattern" && e.attr("id") == id;
      EXPECT_TRUE(defined) << id;
    }
  }
  EXPECT_EQ(kinds_seen, (std::set<std::string>{"pad", "real", "row"}))
      << "the rows drew no document or no row padding";
  for (std::int32_t d = 1; d < 40; ++d) {
    EXPECT_NE(reports::document_colour(d), reports::document_colour(d + 1)) << d;
    EXPECT_NE(reports::document_pad_fill(d), reports::document_pad_fill(d + 1)) << d;
  }
}

TEST(LayoutSvg, CellsAreLabelledWithTheirGlobalIndexWhileTheyFit) {
  // Every layout of BSHD rows at C = 4, on the row of 16 it takes or the nearest it does.
  for (const auto& [layout, cp] : testsupport::layouts_at({4})) {
    if (!testsupport::takes_rows(layout, false)) continue;
    SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp);
    const LayoutSpec spec = spec_of(layout, cp);
    const RowPlan row = reference::plan_row(spec, sim::nearest_accepted_len(spec, 16));
    const SvgDocument doc = draw(row);
    ASSERT_EQ(doc.error, "");
    for (std::int64_t band = 0; band < row.cp; ++band) {
      Ints labels;
      for (const auto& e : doc.elements) {
        if (e.attr("class") == "label" &&
            doc.elements[e.parent].attr("data-rank") == std::to_string(band))
          labels.push_back(std::stoll(e.text));
      }
      EXPECT_EQ(labels, row.index[static_cast<std::size_t>(band)]) << "rank " << band;
    }
    EXPECT_TRUE(with_class(doc, "ramp").empty()) << "labels already say where each cell comes from";
  }
}

TEST(LayoutSvg, TicksMarkWhereTheLocalOrderJumpsInGlobalIndex) {
  std::int64_t jumps = 0;
  for (const auto& [layout, cp] : testsupport::layouts_at({2, 4})) {
    SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp);
    const RowPlan row = packed_row(layout, cp, {8, 24});
    const SvgDocument doc = draw(row);
    ASSERT_EQ(doc.error, "");
    const auto cells = cells_by_rank(doc);
    jumps += static_cast<std::int64_t>(with_class(doc, "jump").size());
    for (std::size_t r = 0; r < cells.size(); ++r) {
      std::vector<std::string> expected, drawn;
      for (std::size_t k = 1; k < row.index[r].size(); ++k) {
        if (row.index[r][k] != row.index[r][k - 1] + 1) expected.push_back(cells[r][k]->attr("x"));
      }
      for (const SvgElement* tick : with_class(doc, "jump")) {
        if (doc.elements[tick->parent].attr("data-rank") == std::to_string(r))
          drawn.push_back(tick->attr("x1"));
      }
      EXPECT_EQ(drawn, expected) << "rank " << r;
    }
  }
  EXPECT_GT(jumps, 0) << "no layout's local order jumps: the ticks went untested";
}

// A long row's picture: no labels but the ramp, bounded width, merged strips, bounded size.
void long_row_stays_readable_and_small(const RowPlan& row) {
  const std::string svg = reports::layout_svg(row, reference::causal_work(row), "long row");
  const SvgDocument doc = read_svg(svg);
  ASSERT_EQ(doc.error, "");
  EXPECT_EQ(with_class(doc, "cell").size(), static_cast<std::size_t>(row.padded_len));
  EXPECT_TRUE(with_class(doc, "label").empty()) << "labels of sub-pixel cells are unreadable";
  EXPECT_FALSE(with_class(doc, "ramp").empty()) << "without labels the position ramp must show";
  EXPECT_LE(std::stod(doc.elements[0].attr("width")), 1700.0);
  // Runs of equal owner / document are merged on the stream strips: well under 3 rects per slot.
  std::size_t rects = 0;
  for (const auto& e : doc.elements) rects += e.name == "rect";
  EXPECT_LT(rects, static_cast<std::size_t>(row.padded_len) * 3 / 2);
  EXPECT_LT(svg.size(), 2'000'000u);
}

// Runs of one owner along a row's global stream.
std::int64_t owner_runs(const RowPlan& row) {
  std::vector<std::int64_t> owner(static_cast<std::size_t>(row.padded_len), -1);
  for (std::size_t r = 0; r < row.index.size(); ++r) {
    for (std::int64_t g : row.index[r])
      owner[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(r);
  }
  std::int64_t runs = 0;
  for (std::size_t g = 0; g < owner.size(); ++g) runs += g == 0 || owner[g] != owner[g - 1];
  return runs;
}

TEST(LayoutSvg, LongRowsStayReadableAndSmall) {
  // Every layout of packed rows at C = 8 whose ranks hold runs of the stream (8 slots on average
  // or more): the strips merge what one owner holds in a run, so a layout that deals single slots
  // round-robin draws a rect per slot by design.
  int drawn = 0;
  for (const auto& [layout, cp] : testsupport::layouts_at({8})) {
    if (!testsupport::takes_rows(layout, true)) continue;
    SCOPED_TRACE(::testing::Message() << layout << " cp=" << cp);
    const RowPlan row = packed_row(layout, cp, {700, 300, 1200, 50, 900, 421, 500});
    if (owner_runs(row) * 8 > row.padded_len) continue;
    long_row_stays_readable_and_small(row);
    ++drawn;
  }
  EXPECT_GE(drawn, 2) << "fewer than two layouts hold runs of the stream";
}

TEST(LayoutSvg, RankColoursAreDistinctAndOrdered) {
  for (std::int64_t cp : {2, 3, 8, 16}) {
    std::set<std::string> seen;
    for (std::int64_t r = 0; r < cp; ++r)
      EXPECT_TRUE(seen.insert(reports::rank_colour(r, cp)).second) << r;
  }
}

TEST(LayoutSvg, MismatchedInputsAreAnError) {
  const RowPlan row = packed_row(testsupport::a_plain_layout(), 2, {5, 3, 8});
  EXPECT_THROW(reports::layout_svg(row, {1, 2, 3}, "work of three ranks for two"), Error);
  RowPlan broken = row;
  broken.index[1][0] = 99;
  EXPECT_THROW(reports::layout_svg(broken, reference::causal_work(row), "slot outside L"), Error);
  EXPECT_THROW(
      reports::write_layout_svg("/nonexistent/dir/x.svg", row, reference::causal_work(row), "t"),
      Error);
}

}  // namespace
}  // namespace cplab::testing
