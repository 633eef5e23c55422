// `cplab explain` and `cplab layout --layout all`: every registered layout side by side on a row
// of a torch.save batch; every layout's SVG and the HTML page parsed as XML (pugixml) and the page
// rendered by headless Chromium to a PNG whose size and colours are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "core/layout_option.hpp"
#include "reference/plan.hpp"
#include "tests/cli/page_render.hpp"
#include "tests/cli/shard_fixtures.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

class CliExplain : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
    io::save_torch_batch(packed_batch({5, 3, 8}, true), dir.file("batch.pt"));
  }
  std::string explain(const std::string& args) {
    const auto run = run_cplab("explain --batch " + dir.file("batch.pt") + " " + args);
    EXPECT_EQ(run.status, 0) << args << ": " << run.err;
    return run.out;
  }
  ScratchDir dir;
};

TEST_F(CliExplain, AllPutsEveryRegisteredLayoutSideBySide) {
  const std::string text = explain("--layout all --cp 2 --chunk-size 2");
  for (const std::string& name : reference::layout_names())
    EXPECT_NE(text.find("\n" + name + " cp=2"), std::string::npos) << name << "\n" << text;
  // Each layout's section is what `explain --layout NAME` alone says of the row, line for line
  // (thd's values on these documents, SPEC §9 example 3: layouts/thd_test.cpp).
  int sections = 0;
  for (const std::string& name : reference::layout_names()) {
    std::string flags = " --cp 2";
    for (const layouts::LayoutOption* option : layouts::options_of(name))
      if (std::string(option->flag) == "--chunk-size") flags += " --chunk-size 2";
    const std::string alone =
        run_cplab("explain --batch " + dir.file("batch.pt") + " --layout " + name + flags).out;
    const std::size_t section = alone.find("\n== ");
    if (section == std::string::npos) continue;  // a layout that cannot lay this row out
    ++sections;
    EXPECT_NE(text.find(alone.substr(section + 1)), std::string::npos)
        << name << "'s section differs from its own explain:\n"
        << alone.substr(section + 1);
  }
  EXPECT_GE(sections, 2) << text;
  const std::string cp_off = testsupport::first_layout(
      "a CP-off layout", [](const sim::LayoutDescriptor& layout) { return layout.cp_off; });
  EXPECT_NE(text.find("cannot lay out this row"), std::string::npos) << cp_off << " at cp=2";
}

TEST_F(CliExplain, LayoutAllJsonListsEveryLayoutWithWorkAndBytes) {
  const auto run =
      run_cplab("layout --layout all --cp 2 --chunk-size 2 --json --batch " + dir.file("batch.pt"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  std::vector<std::string> names;
  for (const auto& layout : out["layouts"]) {
    names.push_back(layout["layout"]);
    if (layout.contains("error")) continue;
    EXPECT_EQ(layout["causal_work"].size(), 2u) << layout;
    EXPECT_GT(layout["bytes_per_rank"]["gather_token_tensor"][0].get<std::int64_t>(), 0) << layout;
  }
  // Every layout once, ranked (not in registry order).
  std::sort(names.begin(), names.end());
  std::vector<std::string> registered = reference::layout_names();
  std::sort(registered.begin(), registered.end());
  EXPECT_EQ(names, registered);
}

// The SVG of every registered layout side by side: well-formed XML, one band cell (a rect with
// data-g) per slot of each padded row a layout lays out, and as many fetched-target marks as the
// text lists targets fetched (thd's own marks, slot by slot: layouts/thd_test.cpp).
TEST_F(CliExplain, SvgParsesAndMarksTheFetchedTargets) {
  const std::string args = "--layout all --cp 2 --chunk-size 2";
  const auto all = run_cplab("layout --json " + args + " --batch " + dir.file("batch.pt"));
  ASSERT_EQ(all.status, 0) << all.err;
  const nlohmann::json compared = nlohmann::json::parse(all.out);
  std::int64_t slots = 0, laid_out = 0;
  for (const auto& layout : compared["layouts"]) {
    if (layout.contains("error")) continue;  // a layout that cannot lay this row out draws none
    ++laid_out;
    slots += layout["padded_seq_len"].get<std::int64_t>();
  }
  EXPECT_GE(laid_out, 5);
  const std::string text = explain(args);
  std::int64_t listed = 0;  // the targets the text says each rank fetches
  for (std::size_t at = text.find("targets fetched: "); at != std::string::npos;
       at = text.find("targets fetched: ", at + 1)) {
    const std::string line = text.substr(at, text.find('\n', at) - at);
    for (std::size_t part = line.find(" for global "); part != std::string::npos;
         part = line.find(" for global ", part + 1)) {
      const std::string targets = line.substr(part, line.find(';', part) - part);
      listed += 1 + std::count(targets.begin(), targets.end(), ',');
    }
  }
  EXPECT_GT(listed, 0) << text;
  explain(args + " --format svg --out " + dir.file("all.svg"));
  pugi::xml_document svg;
  const auto parsed = svg.load_file(dir.file("all.svg").c_str());
  ASSERT_TRUE(parsed) << parsed.description();
  EXPECT_EQ(static_cast<std::int64_t>(svg.select_nodes("//*[@class='cell']").size()), slots);
  EXPECT_EQ(static_cast<std::int64_t>(svg.select_nodes("//*[@data-kind='fetched']").size()), listed)
      << text;
}

TEST_F(CliExplain, HtmlPageParsesAndRendersInChromium) {
  explain("--layout all --cp 2 --chunk-size 2 --format html --out " + dir.file("page.html"));
  pugi::xml_document page;
  const auto parsed = page.load_file(dir.file("page.html").c_str());
  ASSERT_TRUE(parsed) << parsed.description();
  // One picture per registered layout that lays this row out at C = 2 (a CP-off layout cannot,
  // nor one whose padding is the caller's, or whose default block does not divide over C), as
  // `cplab layout --layout all` counts them.
  const auto all =
      run_cplab("layout --layout all --cp 2 --chunk-size 2 --json --batch " + dir.file("batch.pt"));
  ASSERT_EQ(all.status, 0) << all.err;
  std::size_t laid_out = 0;
  const auto compared = nlohmann::json::parse(all.out);
  for (const auto& layout : compared["layouts"]) laid_out += layout.contains("error") ? 0 : 1;
  EXPECT_GE(laid_out, 5u);
  EXPECT_EQ(page.select_nodes("//*[local-name()='svg']").size(), laid_out);
  EXPECT_TRUE(page.select_node("//*[local-name()='table'][@class='compare']"));
  const std::string html = slurp(dir.file("page.html"));
  EXPECT_EQ(html.find("<script"), std::string::npos);  // nothing to fetch, nothing to run
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" href=\"http"), std::string::npos);
  const Picture png = render_in_chromium(dir.file("page.html"), dir.file("page.png"), 1200, 1600);
  if (!png.error.empty() && png.rgb.empty()) GTEST_SKIP() << "skipped: " << png.error;
  EXPECT_EQ(png.width, 1200);
  EXPECT_EQ(png.height, 1600);
  EXPECT_GT(png.non_white(), 1200 * 1600 / 50) << "blank page";
  EXPECT_GT(png.count(0x4e79a7), 500) << "document 1's colour in the pictures";
  EXPECT_GT(png.count(0xd62728, 20), 10) << "fetched-target marks";
}

TEST_F(CliExplain, BadArgumentsExitTwoWithOneLine) {
  const std::string packed_only = testsupport::first_layout(
      "a layout that takes no BSHD rows",
      [](const sim::LayoutDescriptor& layout) { return !layout.bshd_rows; });
  expect_usage_error(run_cplab("explain --layout " + packed_only + " --cp 2 --seq-len 16"),
                     {packed_only, "BSHD"});
  expect_usage_error(run_cplab("explain --layout nope --cp 2 --seq-len 16"), {"nope"});
  expect_usage_error(run_cplab("explain --layout all --cp 2 --seq-len 16 --format pdf"), {"pdf"});
}

// Bidirectional spans from a batch key (SPEC §13.5): each run of tokens the key marks is one
// span, the same mask as those spans given by hand; the work under it follows, in layout,
// explain and schedule; a key the batch lacks, or no batch, is one line.
TEST_F(CliExplain, SpansComeFromTheRunsABatchKeyMarks) {
  Batch batch = packed_batch({5, 3, 8}, true);
  std::vector<std::int64_t> marked(16, 0);
  for (int s : {2, 3, 4, 5, 9, 10, 11}) marked[static_cast<std::size_t>(s)] = 1;
  batch.add("image_mask", Tensor::from<std::int64_t>({1, 16}, marked));
  const std::string file = dir.file("marked.pt");
  io::save_torch_batch(batch, file);
  const std::string layout = " --layout " + testsupport::a_plain_layout() + " --cp 2";
  const auto from_key =
      run_cplab("layout --batch " + file + layout + " --json --mask bidirectional:key=image_mask");
  const auto by_hand =
      run_cplab("layout --batch " + file + layout + " --json --mask bidirectional:2-6,9-12");
  ASSERT_EQ(from_key.status, 0) << from_key.err;
  ASSERT_EQ(by_hand.status, 0) << by_hand.err;
  const nlohmann::json k = nlohmann::json::parse(from_key.out),
                       h = nlohmann::json::parse(by_hand.out);
  EXPECT_EQ(k["mask"], "bidirectional:2-6,9-12");
  EXPECT_EQ(k, h);
  const auto causal =
      nlohmann::json::parse(run_cplab("layout --batch " + file + layout + " --json").out);
  EXPECT_NE(k["ranks"], causal["ranks"]);  // the spans add pairs
  for (const std::string command : {"explain", "schedule"}) {
    const auto run =
        run_cplab(command + " --batch " + file + layout + " --mask bidirectional:key=image_mask");
    EXPECT_EQ(run.status, 0) << command << ": " << run.err;
    EXPECT_NE(run.out.find("bidirectional:2-6,9-12"), std::string::npos) << run.out;
  }
  expect_usage_error(
      run_cplab("layout --batch " + file + layout + " --mask bidirectional:key=pixels"),
      {"no token key 'pixels'", "image_mask"});
  expect_usage_error(run_cplab("layout --seq-len 16" + layout + " --mask bidirectional:key=x"),
                     {"need --batch"});
  expect_usage_error(run_cplab("layout --batch " + file + layout + " --mask bidirectional:key="),
                     {"name the batch key"});
}

}  // namespace
}  // namespace cplab::testing
