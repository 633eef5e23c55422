// `cplab check` on the files Automodel's sharders really write (automodel_fixtures.hpp): each
// convention they follow is accepted and named, and one planted fault in the same files is still
// found on the right rank and key.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/torch_batch.hpp"
#include "tests/cli/automodel_fixtures.hpp"
#include "tests/cli/check_run.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing::automodel {
namespace {

using testsupport::run_cplab;
using testsupport::ScratchDir;

class AutomodelCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  }

  // Saves the files as they are and runs `cplab check` on them (`--json` unless `text`).
  CheckRun check(const Files& files, const std::string& layout, const std::string& extra = "",
                 bool text = false) {
    io::save_torch_dict(files.batch, dir.file("global.pt"));
    std::string paths;
    for (std::size_t r = 0; r < files.ranks.size(); ++r) {
      const std::string path = dir.file("rank" + std::to_string(r) + ".pt");
      io::save_torch_dict(files.ranks[r], path);
      paths += " " + path;
    }
    const auto run = run_cplab(extra + " check" + (text ? "" : " --json") + " --batch " +
                               dir.file("global.pt") + " --shards" + paths + " --cp " +
                               std::to_string(files.ranks.size()) + " --layout " + layout);
    CheckRun out{run.status, nlohmann::json::object(), run.err};
    if (text) {
      out.out = run.out;
    } else if (!run.out.empty()) {
      out.out = nlohmann::json::parse(run.out);
    }
    return out;
  }

  ScratchDir dir;
};

TEST_F(AutomodelCheck, ThdOneRowWithMaxSeqlenAndPlainValuesMatches) {
  const Files files = thd({{5, 3, 8}}, 2, 24);
  for (const char* layout : {"thd", "auto"}) {
    const auto run = check(files, layout);
    ASSERT_EQ(run.status, 0) << layout << ": " << run.out.dump(1) << run.err;
    EXPECT_EQ(run.out["layout"], "thd");
    const auto& conventions = run.out["conventions"];
    EXPECT_EQ(conventions["cu_seqlens"], "global");
    EXPECT_FALSE(conventions["max_seqlen"].is_null()) << conventions;
    EXPECT_EQ(conventions["cu_seqlens_filler"], nlohmann::json::array());
  }
}

TEST_F(AutomodelCheck, AWrongMaxSeqlenIsADifferenceOfThatRank) {
  Files files = thd({{5, 3, 8}}, 2, 24);
  // cu_seqlens [0, 8, 12, 24]: the longest segment is the last, 12 tokens.
  files.ranks[1]["max_seqlen"] = int32s({}, {11});
  const auto run = check(files, "thd");
  EXPECT_EQ(run.status, 1) << run.out.dump(1);
  const auto d = first_difference(run, 1, "max_seqlen");
  EXPECT_EQ(d["kind"], "max_seqlen");
  EXPECT_EQ(d["begin"], 2);
  EXPECT_NE(d["message"].get<std::string>().find("11"), std::string::npos) << d;
  EXPECT_EQ(run.out["differences"].size(), 1u) << run.out.dump(1);
  // A bound larger than needed is within TE's contract.
  files.ranks[1]["max_seqlen"] = int32s({}, {100});
  EXPECT_EQ(check(files, "thd").status, 0);
}

// Hostile max_seqlen and cu_seqlens values are differences of their rank and key (exit 1), never a
// crash or a wrong read: a float or NaN max_seqlen, a [2, 2] or [1, 1] one, a row of filler only,
// and filler in the middle of a row. A max_seqlen past int32 is no difference.
TEST_F(AutomodelCheck, HostileTablesAreDifferencesOfTheirRankAndKey) {
  const Files clean = thd({{5, 3, 8}}, 2, 24);
  struct Bad {
    const char* key;
    Tensor value;
    const char* kind;
  };
  const std::vector<Bad> cases = {
      {"max_seqlen", Tensor::from<float>({}, {12.5f}), "dtype"},
      {"max_seqlen", Tensor::from<float>({}, {std::numeric_limits<float>::quiet_NaN()}), "dtype"},
      {"max_seqlen", int32s({2, 2}, {12, 12, 12, 12}), "shape"},
      {"max_seqlen", int32s({1, 1}, {12}), "shape"},
      {"cu_seqlens", int32s({4}, {kFiller, kFiller, kFiller, kFiller}), "cu_seqlens"},
      {"cu_seqlens", int32s({4}, {0, 8, kFiller, 24}), "cu_seqlens"},
  };
  for (const Bad& bad : cases) {
    Files files = clean;
    files.ranks[1][bad.key] = bad.value;
    const auto run = check(files, "thd");
    EXPECT_EQ(run.status, 1) << bad.key << " " << tensor_brief(bad.value) << run.err;
    EXPECT_EQ(first_difference(run, 1, bad.key)["kind"], bad.kind) << tensor_brief(bad.value);
  }
  // Past int32 is still an integer at least the longest segment: no difference.
  Files files = clean;
  files.ranks[1]["max_seqlen"] = ints({}, {std::int64_t{1} << 40});
  EXPECT_EQ(check(files, "thd").status, 0);
}

TEST_F(AutomodelCheck, StackedRowsWithFillerMatchAndAutoNamesThd) {
  const Files files = thd({{5, 3, 8}, {18}, {4, 4, 4, 4}}, 2, 24);
  const auto run = check(files, "auto");
  ASSERT_EQ(run.status, 0) << run.out.dump(1) << run.err;
  EXPECT_EQ(run.out["layout"], "thd");
  EXPECT_EQ(run.out["conventions"]["cu_seqlens_filler"], nlohmann::json({kFiller}));
  const auto text = check(files, "thd", "", true);
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.get<std::string>().find("filler -1000"), std::string::npos) << text.out;
  EXPECT_NE(text.out.get<std::string>().find("max_seqlen"), std::string::npos) << text.out;
}

TEST_F(AutomodelCheck, AWrongEntryBeforeTheFillerIsStillFound) {
  Files files = thd({{5, 3, 8}, {18}, {4, 4, 4, 4}}, 2, 24);
  Ints cu = values(files.ranks[0], "cu_seqlens");  // [3, 5]: row 1 is [0, 24, -1000 ...]
  cu[5 + 1] = 18;
  set_values(files.ranks[0], "cu_seqlens", cu);
  for (const char* layout : {"thd", "auto"}) {
    const auto run = check(files, layout);
    EXPECT_EQ(run.status, 1) << layout << ": " << run.out.dump(1);
    EXPECT_EQ(run.out["layout"], "thd") << layout;
    const auto d = first_difference(run, 0, "cu_seqlens");
    EXPECT_EQ(d["row"], 1);
    EXPECT_EQ(d["begin"], 1);
  }
  // A stacked max_seqlen is checked row by row: the rows' longest segments are 12, 24 and 12.
  files = thd({{5, 3, 8}, {18}, {4, 4, 4, 4}}, 2, 24);
  set_values(files.ranks[1], "max_seqlen", {12, 24, 3});
  const auto run = check(files, "thd");
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(first_difference(run, 1, "max_seqlen")["row"], 2);
}

TEST_F(AutomodelCheck, PaddingMaskStandsForTheBatchsAttentionMask) {
  const Files files = head_tail({13, 9}, 13, 2);  // L = 16: three added slots per row
  for (const char* layout : {"head-tail", "auto"}) {
    const auto run = check(files, layout);
    ASSERT_EQ(run.status, 0) << layout << ": " << run.out.dump(1) << run.err;
    EXPECT_EQ(run.out["layout"], "head-tail");
    EXPECT_EQ(run.out["conventions"]["padding_mask_for_attention_mask"], true);
  }
  // A real token marked as padding: row 1, global slot 8 (rank 0 holds slots 0..3 and 12..15 of
  // each row; rank 1 holds 4..7 and 8..11, so slot 8 is rank 1's local slot 4).
  Files wrong = files;
  Ints mask = values(wrong.ranks[1], "padding_mask");
  ASSERT_EQ(mask[8 + 4], 0);
  mask[8 + 4] = 1;
  set_values(wrong.ranks[1], "padding_mask", mask);
  const auto run = check(wrong, "head-tail");
  EXPECT_EQ(run.status, 1);
  const auto d = first_difference(run, 1, "padding_mask");
  EXPECT_EQ(d["row"], 1);
  EXPECT_EQ(d["begin"], 4);
  EXPECT_EQ(d["should_hold"], nlohmann::json({8}));
  // An added slot marked as a real token is a wrong pad.
  wrong = files;
  mask = values(wrong.ranks[0], "padding_mask");
  ASSERT_EQ(mask[7], 1);  // row 0, global slot 15: added
  mask[7] = 0;
  set_values(wrong.ranks[0], "padding_mask", mask);
  EXPECT_EQ(first_difference(check(wrong, "head-tail"), 0, "padding_mask")["kind"], "pad");
}

TEST_F(AutomodelCheck, NonTensorEntriesAreSkippedAndNamedUnderVerbose) {
  Files files = thd({{5, 3, 8}}, 2, 24);
  auto run = check(files, "thd", "", true);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err.find("skipped"), std::string::npos) << run.err;
  run = check(files, "thd", "--verbose", true);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("global.pt: skipped 1 non-tensor entry: qkv_format (String)"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("cp_rank (Int), cp_size (Int), qkv_format (String)"), std::string::npos)
      << run.err;
  // A planted fault is still found beside them: two tokens of rank 1 swapped.
  Ints ids = values(files.ranks[1], "input_ids");
  std::swap(ids[0], ids[1]);
  set_values(files.ranks[1], "input_ids", ids);
  const auto wrong = check(files, "thd");
  EXPECT_EQ(wrong.status, 1);
  EXPECT_EQ(first_difference(wrong, 1, "input_ids")["begin"], 0);
}

TEST_F(AutomodelCheck, LayoutAndExplainReadABatchHoldingStringsAndInts) {
  Files files = thd({{5, 3, 8}}, 2, 24);
  files.batch["num_packs"] = std::int64_t{3};
  io::save_torch_dict(files.batch, dir.file("global.pt"));
  const auto layout =
      run_cplab("layout --json --layout thd --cp 2 --batch " + dir.file("global.pt"));
  ASSERT_EQ(layout.status, 0) << layout.err;
  EXPECT_EQ(nlohmann::json::parse(layout.out)["ranks"][1]["indices"],
            nlohmann::json({2, 3, 4, 5, 9, 10, 15, 16, 17, 18, 19, 20}));
  const auto explain =
      run_cplab("--verbose explain --layout thd --cp 2 --batch " + dir.file("global.pt"));
  ASSERT_EQ(explain.status, 0) << explain.err;
  EXPECT_NE(explain.err.find("num_packs (Int), qkv_format (String)"), std::string::npos)
      << explain.err;
  // A key cplab knows is still refused when it is not a tensor.
  files.batch["seq_lens"] = std::string("5,3,8");
  io::save_torch_dict(files.batch, dir.file("bad.pt"));
  testsupport::expect_usage_error(
      run_cplab("layout --layout thd --cp 2 --batch " + dir.file("bad.pt")), {"seq_lens"});
}

}  // namespace
}  // namespace cplab::testing::automodel
