// `cplab schedule --format html`: the attention matrix beside the work grid, parsed as XML
// (pugixml) and rendered by headless Chromium, for a causal row, a windowed one and a packed one;
// the rendered page must show both ranks' colours, the grey of the masked pairs, and the text
// table line by line.
#include <gtest/gtest.h>

#include <pugixml.hpp>
#include <string>

#include "tests/cli/page_render.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

// Ranks 0 and 1 of two on the colour wheel (reports/attention_matrix_svg.cpp), and the grey of
// pairs no rank computes.
constexpr std::uint32_t kRank0 = 0xd34545, kRank1 = 0x45d3d3, kMasked = 0xe4e4e4;

void expect_the_page_shows_the_matrix(const std::string& row, const std::string& what) {
  ScratchDir dir;
  const auto run = run_cplab("schedule --layout " + testsupport::a_plain_layout() + " --cp 2 " +
                             row + " --algo ring --heads 2 --format html --per-step --out " +
                             dir.file("page.html") + " --svg " + dir.file("picture.svg"));
  ASSERT_EQ(run.status, 0) << what << ": " << run.err;
  // The picture as XML: the work grid and the matrix, stacked in one root.
  pugi::xml_document picture;
  const auto parsed = picture.load_file(dir.file("picture.svg").c_str());
  ASSERT_TRUE(parsed) << what << ": " << parsed.description();
  EXPECT_EQ(picture.select_nodes("//*[local-name()='svg']").size(), 3u) << what;
  EXPECT_GT(picture.select_nodes("//*[@data-q]").size(), 0u) << what;
  EXPECT_NE(slurp(dir.file("page.html")).find("<svg"), std::string::npos) << what;
  const Picture png = render_in_chromium(dir.file("page.html"), dir.file("page.png"), 1000, 1800);
  if (!png.error.empty() && png.rgb.empty()) GTEST_SKIP() << "skipped: " << png.error;
  EXPECT_GT(png.count(kRank0), 400) << what << ": rank 0's pairs";
  EXPECT_GT(png.count(kRank1), 400) << what << ": rank 1's pairs";
  EXPECT_GT(png.count(kMasked, 3), 2000) << what << ": the masked pairs";
}

TEST(CliSchedulePage, TheAttentionMatrixRendersForCausalWindowedAndPackedRows) {
  expect_the_page_shows_the_matrix("--seq-len 16", "causal");
  expect_the_page_shows_the_matrix("--seq-len 16 --mask window:4", "window:4");
  expect_the_page_shows_the_matrix("--doc-lens 5,3,8", "packed");
}

}  // namespace
}  // namespace cplab::testing
