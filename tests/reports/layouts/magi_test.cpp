// magi's own layout picture: SPEC §9.6's row (documents of 8 and 24 at C = 4, K = 4) draws its
// work panel with the loads 100, 84, 84, 68, their mean and the imbalance 1.190.
#include <gtest/gtest.h>

#include <set>

#include "tests/reports/layout_svg_fixtures.hpp"

namespace cplab::testing {
namespace {

TEST(LayoutSvg, WorkPanelShowsValidTokensWorkAndTheMean) {
  const RowPlan row = packed_row("magi", 4, {8, 24});  // SPEC §9.6: loads 100, 84, 84, 68
  const SvgDocument doc = draw(row);
  ASSERT_EQ(doc.error, "");
  std::vector<double> bars;
  for (const SvgElement* bar : with_class(doc, "work"))
    bars.push_back(std::stod(bar->attr("width")));
  ASSERT_EQ(bars.size(), 4u);
  const std::vector<double> relative{1.0, 0.84, 0.84, 0.68};
  for (std::size_t r = 0; r < 4; ++r) EXPECT_NEAR(bars[r] / bars[0], relative[r], 1e-3) << r;
  std::multiset<std::string> texts;  // captions and numbers, not cell labels or axis ticks
  for (const auto& e : doc.elements) {
    if (e.name == "text" && e.attr("class") != "label" && e.attr("class") != "tick")
      texts.insert(e.text);
  }
  for (const char* work : {"100", "84", "68"}) EXPECT_TRUE(texts.count(work)) << work;
  bool mean = false;
  for (const auto& e : doc.elements) mean |= e.name == "text" && e.text == "mean";
  EXPECT_TRUE(mean) << "the mean line is named";
  EXPECT_EQ(texts.count("8"), 4u) << "every rank holds 8 valid tokens";
  bool imbalance = false;
  for (const auto& text : texts) imbalance |= text.find("imbalance 1.190") != std::string::npos;
  EXPECT_TRUE(imbalance) << "100 / mean 84 = 1.190";
}

}  // namespace
}  // namespace cplab::testing
