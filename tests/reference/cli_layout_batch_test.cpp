// `cplab layout --batch FILE.pt [--row i]` and `--svg FILE` end to end: a batch written with
// io::save_torch_batch is laid out exactly as --doc-lens / --seq-len lay out the same rows, the
// single-row JSON contract is unchanged without --batch, and bad combinations exit 2 with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/torch_batch.hpp"
#include "reference/plan.hpp"
#include "tests/reports/svg_reader.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;
using Ints = std::vector<std::int64_t>;

// The plumbing of --batch, --row and --svg, whatever the layout: a plain one (it takes BSHD and
// packed rows), every expected value from its own --doc-lens / --seq-len run or from its plan.
std::string plain_spec(std::int64_t cp) {
  return "--layout " + testsupport::a_plain_layout() + " --cp " + std::to_string(cp) + " ";
}

// A batch of B rows of S tokens; packed when seq_lens is given (one entry per row).
Batch make_batch(std::int64_t rows, std::int64_t seq, const std::vector<Ints>& seq_lens = {}) {
  Batch batch;
  Ints ids(static_cast<std::size_t>(rows * seq));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i % 97);
  batch.add(keys::input_ids, Tensor::from<std::int64_t>({rows, seq}, ids));
  batch.add(keys::labels, Tensor::from<std::int64_t>({rows, seq}, ids));
  batch.seq_lens = seq_lens;
  return batch;
}

nlohmann::json layout_json(const std::string& args) {
  const auto run = run_cplab("layout --json " + args);
  EXPECT_EQ(run.status, 0) << args << ": " << run.err;
  return run.status == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
}

// The single-row fields that must agree between a batch row and the same row given directly.
nlohmann::json row_fields(const nlohmann::json& out) {
  nlohmann::json row;
  for (const char* key : {"padded_seq_len", "original_seq_len", "imbalance", "ranks"})
    row[key] = out[key];
  return row;
}

class CliLayoutBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  }
  ScratchDir dir;
};

// Every layout, as the registry lists them: a packed batch row and the same documents given by
// --doc-lens are the same row, laid out alike or refused alike.
TEST_F(CliLayoutBatch, PackedRowGivesTheSameMapsAsDocLens) {
  const std::string path = dir.file("packed.pt");
  io::save_torch_batch(make_batch(1, 16, {{5, 3, 8}}), path);
  int laid_out = 0;
  for (const std::string& layout : reference::layout_names()) {
    for (int cp : {2, 3}) {
      const std::string spec =
          "layout --json --layout " + layout + " --cp " + std::to_string(cp) + " --chunk-size 2 ";
      const auto batch_run = run_cplab(spec + "--batch " + path);
      const auto docs_run = run_cplab(spec + "--doc-lens 5,3,8");
      ASSERT_EQ(batch_run.status, docs_run.status) << spec << batch_run.err << docs_run.err;
      if (docs_run.status != 0) {
        EXPECT_EQ(docs_run.status, 2) << spec << docs_run.err;
        continue;
      }
      ++laid_out;
      const auto batch = nlohmann::json::parse(batch_run.out);
      const auto docs = nlohmann::json::parse(docs_run.out);
      EXPECT_EQ(row_fields(batch), row_fields(docs)) << spec;
      EXPECT_EQ(batch["layout"], layout);
      EXPECT_EQ(batch["row"], 0);
      ASSERT_EQ(batch["rows"].size(), 1u) << spec;
      EXPECT_EQ(batch["rows"][0]["row"], 0);
      EXPECT_EQ(batch["rows"][0]["ranks"], docs["ranks"]) << spec;
    }
  }
  EXPECT_GE(laid_out, 8) << "too few layouts took a packed row of 5,3,8";
}

TEST_F(CliLayoutBatch, EveryPackedRowIsPlannedOnItsOwnAndRowChoosesOne) {
  const std::string path = dir.file("rows.pt");
  const std::vector<std::string> docs = {"5,3,8", "16", "4,12"};
  io::save_torch_batch(make_batch(3, 16, {{5, 3, 8}, {16}, {4, 12}}), path);
  const std::string spec = plain_spec(2);
  const auto all = layout_json(spec + "--batch " + path + " --row 2");
  EXPECT_EQ(all["row"], 2);
  EXPECT_EQ(row_fields(all), row_fields(layout_json(spec + "--doc-lens 4,12")));
  ASSERT_EQ(all["rows"].size(), 3u);
  for (std::size_t b = 0; b < docs.size(); ++b) {
    EXPECT_EQ(all["rows"][b]["row"], b);
    EXPECT_EQ(row_fields(all["rows"][b]), row_fields(layout_json(spec + "--doc-lens " + docs[b])))
        << "row " << b;
  }
  const auto table = run_cplab("layout " + spec + "--batch " + path + " --row 1");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("row 1 of 3"), std::string::npos) << table.out;
  // Row 1 as --doc-lens 16 lays it out: its padded length and imbalance, to three places.
  const auto row1 = layout_json(spec + "--doc-lens 16");
  char line[96];
  std::snprintf(line, sizeof line, "row   1: padded length %lld, imbalance %.3f  (shown above)",
                static_cast<long long>(row1["padded_seq_len"].get<std::int64_t>()),
                row1["imbalance"].get<double>());
  EXPECT_NE(table.out.find(line), std::string::npos) << line << "\n" << table.out;
}

TEST_F(CliLayoutBatch, BshdBatchGivesTheSameMapsAsSeqLen) {
  const std::string path = dir.file("bshd.pt");
  io::save_torch_batch(make_batch(2, 13), path);
  const std::string spec = plain_spec(2);
  const auto batch = layout_json(spec + "--batch " + path + " --row 1");
  EXPECT_EQ(row_fields(batch), row_fields(layout_json(spec + "--seq-len 13")));
  EXPECT_EQ(batch["original_seq_len"], 13);
  EXPECT_EQ(batch["rows"].size(), 2u);
}

TEST(CliLayoutContract, WithoutBatchTheJsonHasExactlyTheSingleRowFields) {
  const ScratchDir dir;
  for (const std::string& args : {plain_spec(2) + "--doc-lens 5,3,8",
                                  plain_spec(2) + "--seq-len 8 --svg " + dir.file("a.svg")}) {
    std::vector<std::string> keys;
    const auto run = run_cplab("layout --json " + args);
    ASSERT_EQ(run.status, 0) << args << ": " << run.err;
    const auto out = nlohmann::ordered_json::parse(run.out);  // keeps the fields' order
    for (auto it = out.begin(); it != out.end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"layout", "cp", "padded_seq_len", "original_seq_len",
                                              "imbalance", "ranks"}))
        << args;
  }
}

TEST(CliLayoutSvg, DrawsTheShownRowWithOneBandPerRank) {
  const ScratchDir dir;
  const std::string svg = dir.file("row.svg");
  const auto run = run_cplab("layout " + plain_spec(2) + "--doc-lens 5,3,8 --svg " + svg);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("picture: " + svg), std::string::npos) << run.out;
  const SvgDocument doc = read_svg(slurp(svg));
  ASSERT_EQ(doc.error, "");
  std::map<std::string, Ints> cells;
  int bands = 0;
  for (const auto& e : doc.elements) {
    bands += e.attr("class") == "band";
    if (e.attr("class") == "cell")
      cells[e.attr("data-rank")].push_back(std::stoll(e.attr("data-g")));
  }
  EXPECT_EQ(bands, 2);
  // One cell per slot each rank holds: the reference's plan of the same row.
  LayoutSpec spec;
  spec.layout = testsupport::a_plain_layout();
  spec.cp = 2;
  const Ints docs{5, 3, 8};
  const RowPlan row = reference::plan_row(spec, 16, &docs);
  for (std::int64_t r = 0; r < 2; ++r) {
    Ints want = row.index[static_cast<std::size_t>(r)];
    std::sort(want.begin(), want.end());
    Ints got = cells[std::to_string(r)];
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "rank " << r;
  }
}

TEST(CliLayoutBatchErrors, BadCombinationsExit2WithOneLine) {
  const ScratchDir dir;
  const std::string good = dir.file("good.pt"), garbage = dir.file("garbage.pt");
  if (io::torch_available())
    io::save_torch_batch(make_batch(3, 16, {{5, 3, 8}, {16}, {4, 12}}), good);
  std::ofstream(garbage) << "not a pickle";
  std::vector<std::pair<std::string, std::string>> cases{
      {"--seq-len 8 --row 1", "--row 1 chooses a row of --batch"},
      {"--seq-len 8 --svg /nonexistent/dir/x.svg",
       "cannot write '/nonexistent/dir/x.svg': No such file"},
  };
  if (io::torch_available()) {
    const std::vector<std::pair<std::string, std::string>> with_torch{
        {"--batch " + good + " --seq-len 8", "both --seq-len and --batch"},
        {"--batch " + good + " --doc-lens 4,4", "both --doc-lens and --batch"},
        {"--batch " + good + " --doc-lens 4,4 --seq-len 8", "all three"},
        {"--batch " + good + " --row 3", "--row 3 is out of range"},
        {"--batch " + good + " --row=-1", "--row -1 is out of range"},
        {"--batch " + dir.file("missing.pt"), "cannot open batch file"},
        {"--batch " + garbage, "not a torch.save file"},
    };
    cases.insert(cases.end(), with_torch.begin(), with_torch.end());
  } else {
    cases.emplace_back("--batch " + good, "no libtorch");
  }
  for (const auto& [args, part] : cases) {
    expect_usage_error(run_cplab("layout " + plain_spec(2) + args), {part}, args);
  }
}

}  // namespace
}  // namespace cplab::testing
