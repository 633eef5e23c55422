// The sweep's index.html end to end: a sweep with a planted failure (a mutant through --impl) and
// a skipped implementation writes a page that parses as XHTML, whose matrix shows passed, failed
// and skipped cells, whose failure carries its counterexample, replay command and picture, and
// whose Chromium screenshot shows the failure and the picture.
#include <gtest/gtest.h>

#include <filesystem>
#include <pugixml.hpp>

#include "tests/cli/page_render.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::fresh_dir;
using testsupport::run_cplab;

TEST(SweepPage, APlantedFailureIsShownWithItsPicture) {
  const auto out = fresh_dir("sweep_page");
  const std::string layout = testsupport::a_plain_layout();
  const auto run = run_cplab(
      "sweep --cases 30 --seed 5 --impl sim,gpu,labels_shifted_locally --layouts " + layout +
      " --properties rank_losses_average_to_global_shifted_loss,shard_then_gather_is_identity "
      "--out " +
      out.string());
  ASSERT_EQ(run.status, 1) << run.out << run.err;
  const std::string page = (out / "index.html").string();
  for (const char* name : {"report.json", "junit.xml", "summary.md", "index.html"})
    EXPECT_TRUE(std::filesystem::exists(out / name)) << name;
  pugi::xml_document doc;
  const auto parsed = doc.load_file(page.c_str());
  ASSERT_TRUE(parsed) << parsed.description();
  EXPECT_EQ(doc.select_nodes("//*[local-name()='td'][@class='fail']").size(), 1u);
  EXPECT_EQ(doc.select_nodes("//*[local-name()='td'][@class='pass']").size(), 3u);
  EXPECT_EQ(doc.select_nodes("//*[local-name()='td'][@class='skip']").size(), 2u);
  const auto failure = doc.select_node("//*[local-name()='section'][@class='failure']").node();
  ASSERT_TRUE(failure);
  const std::string text = failure.text().as_string() + std::string(failure.child_value());
  std::string all;
  for (const auto& pre : failure.select_nodes(".//*[local-name()='pre']"))
    all += pre.node().child_value() + std::string("\n");
  EXPECT_NE(all.find("cplab replay --impl labels_shifted_locally"), std::string::npos) << all;
  EXPECT_NE(all.find(layout + " cp="), std::string::npos) << all;
  EXPECT_TRUE(failure.select_node(".//*[local-name()='svg']//*[@class='cell']"))
      << "the counterexample's picture";
  for (const char* env : {"commit", "compiler", "CUDA", "GPU"}) {
    EXPECT_TRUE(
        doc.select_node((std::string("//*[local-name()='td'][text()='") + env + "']").c_str()))
        << env;
  }

  const Picture png = render_in_chromium(page, (out / "index.png").string(), 1300, 2000);
  if (!png.error.empty() && png.rgb.empty()) GTEST_SKIP() << "skipped: " << png.error;
  EXPECT_EQ(png.width, 1300);
  EXPECT_EQ(png.height, 2000);
  EXPECT_GT(png.non_white(), 1300 * 2000 / 50) << "blank page";
  EXPECT_GT(png.count(0xf8c9c9), 200) << "the failed cell";
  EXPECT_GT(png.count(0xd9f2d9), 200) << "passed cells";
  EXPECT_GT(png.count(0x4e79a7), 500) << "the counterexample's picture";
}

}  // namespace
}  // namespace cplab::testing
