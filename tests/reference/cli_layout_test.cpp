// `cplab layout` end to end: the JSON of SPEC §9's examples 1-6, and bad arguments exit 2 with one
// line on stderr.
#include <map>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::CliRun;
using testsupport::expect_usage_error;
using testsupport::run_cplab;

nlohmann::json layout_json(const std::string& args) {
  const CliRun run = run_cplab("layout --json " + args);
  EXPECT_EQ(run.status, 0) << args << ": " << run.err;
  return nlohmann::json::parse(run.out);
}

std::vector<Ints> indices(const nlohmann::json& out) {
  std::vector<Ints> all;
  for (const auto& rank : out["ranks"]) all.push_back(rank["indices"].get<Ints>());
  return all;
}

TEST(CliLayout, Example1HeadTail) {
  const auto out = layout_json("--layout head-tail --cp 4 --seq-len 16");
  EXPECT_EQ(out["layout"], "head-tail");
  EXPECT_EQ(out["cp"], 4);
  EXPECT_EQ(out["padded_seq_len"], 16);
  EXPECT_EQ(out["original_seq_len"], 16);
  EXPECT_EQ(out["imbalance"], 1.0);
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
  for (const auto& rank : out["ranks"]) {
    EXPECT_EQ(rank["causal_work"], 34);
    EXPECT_EQ(rank["valid_tokens"], 4);
    EXPECT_FALSE(rank.contains("doc_ids"));
    EXPECT_FALSE(rank.contains("cu_seqlens"));
  }
}

TEST(CliLayout, Example2Contiguous) {
  const auto out = layout_json("--layout contiguous --cp 2 --seq-len 6 --pad-multiple 2");
  EXPECT_EQ(out["padded_seq_len"], 8);
  EXPECT_EQ(out["original_seq_len"], 6);
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(out["ranks"][1]["positions"], (Ints{4, 5, 6, 7}));
  EXPECT_EQ(out["ranks"][1]["valid_tokens"], 2);
}

TEST(CliLayout, Example3Thd) {
  const auto out = layout_json("--layout thd --cp 2 --doc-lens 5,3,8");
  EXPECT_EQ(out["padded_seq_len"], 20);
  EXPECT_TRUE(out["original_seq_len"].is_null());
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 6, 7, 8, 11, 12, 13, 18, 19},
                                             {2, 3, 4, 5, 9, 10, 14, 15, 16, 17}}));
  EXPECT_EQ(out["ranks"][0]["positions"], (Ints{0, 1, 6, 7, 0, 3, 0, 1, 6, 7}));
  EXPECT_EQ(out["ranks"][1]["positions"], (Ints{2, 3, 4, 5, 1, 2, 2, 3, 4, 5}));
  EXPECT_EQ(out["ranks"][0]["doc_ids"], (Ints{1, 1, 1, 1, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(out["ranks"][1]["cu_seqlens"], (Ints{0, 4, 6, 10}));
}

TEST(CliLayout, Example4Thd) {
  const auto out = layout_json("--layout thd --cp 2 --doc-lens 4,12");
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(out["ranks"][0]["causal_work"], 44);
  EXPECT_EQ(out["ranks"][1]["causal_work"], 44);
}

TEST(CliLayout, Example5And6Magi) {
  auto out = layout_json("--layout magi --cp 4 --chunk-size 4 --seq-len 32");
  EXPECT_EQ(indices(out)[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
  for (const auto& rank : out["ranks"]) EXPECT_EQ(rank["causal_work"], 132);
  out = layout_json("--layout magi --cp 4 --chunk-size 4 --doc-lens 8,24");
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 2, 3, 28, 29, 30, 31},
                                             {8, 9, 10, 11, 24, 25, 26, 27},
                                             {4, 5, 6, 7, 20, 21, 22, 23},
                                             {12, 13, 14, 15, 16, 17, 18, 19}}));
  Ints loads;
  for (const auto& rank : out["ranks"]) loads.push_back(rank["causal_work"].get<std::int64_t>());
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_NEAR(out["imbalance"].get<double>(), 100.0 / 84.0, 1e-12);
}

TEST(CliLayout, Example13UspNamesRingAndUlyssesRanks) {
  const auto out = layout_json("--layout usp --cp 4 --ring-degree 2 --seq-len 16");
  EXPECT_EQ(out["layout"], "usp");
  EXPECT_EQ(out["ring_degree"], 2);
  EXPECT_EQ(out["ulysses_degree"], 2);
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{0, 1, 2, 3}, {12, 13, 14, 15}, {4, 5, 6, 7}, {8, 9, 10, 11}}));
  const std::vector<std::pair<int, int>> ranks = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(out["ranks"][r]["ring_rank"], ranks[r].first) << r;
    EXPECT_EQ(out["ranks"][r]["ulysses_rank"], ranks[r].second) << r;
  }
  EXPECT_EQ(out["ranks"][1]["causal_work"], 58);
  const CliRun table = run_cplab("layout --layout usp --cp 4 --ring-degree 2 --seq-len 16");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("usp cp=4 ring_degree=2"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("ring_rank 1, ulysses_rank 0"), std::string::npos) << table.out;
  // Other layouts carry none of it.
  EXPECT_FALSE(
      layout_json("--layout head-tail --cp 4 --seq-len 16")["ranks"][0].contains("ring_rank"));
}

TEST(CliLayout, TableNamesEveryRank) {
  const CliRun run = run_cplab("layout --layout thd --cp 2 --doc-lens 5,3,8");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("[0, 1, 6, 7, 8, 11, 12, 13, 18, 19]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cu_seqlens [0, 4, 6, 10]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("padded length 20"), std::string::npos) << run.out;
}

TEST(CliLayout, Example10PerDocHeadTail) {
  const auto out = layout_json("--layout per-doc-head-tail --cp 2 --doc-lens 8,4");
  EXPECT_EQ(out["layout"], "per-doc-head-tail");
  EXPECT_EQ(out["padded_seq_len"], 12);
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 6, 7, 8, 11}, {2, 3, 4, 5, 9, 10}}));
  EXPECT_EQ(out["ranks"][0]["positions"].get<Ints>(), (Ints{0, 1, 6, 7, 8, 11}));
  EXPECT_EQ(out["ranks"][1]["doc_ids"].get<Ints>(), (Ints{1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(out["ranks"][0]["causal_work"], 23);
  EXPECT_EQ(out["ranks"][1]["causal_work"], 23);
  EXPECT_EQ(out["imbalance"].get<double>(), 1.0);
  // A BSHD row is one document: head-tail's map.
  EXPECT_EQ(indices(layout_json("--layout per-doc-head-tail --cp 4 --seq-len 16")),
            indices(layout_json("--layout head-tail --cp 4 --seq-len 16")));
}

TEST(CliLayout, BadArgumentsExit2WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--layout head-tail --cp 0 --seq-len 8", "cp=0"},
      {"--layout head-tail --cp 2", "neither"},
      {"--layout head-tail --cp 2 --seq-len 8 --doc-lens 4,4", "both"},
      {"--layout zigzag --cp 2 --seq-len 8", "known layouts"},
      {"--layout head-tail --cp 2 --seq-len=-4", "-4"},
      {"--layout thd --cp 2 --doc-lens 4,-2", "negative length -2"},
      {"--layout thd --cp 2 --doc-lens 4,x,2", "'x' is not an integer"},
      {"--layout thd --cp 2 --doc-lens 4,,2", "is not an integer"},
      {"--layout head-tail --cp two --seq-len 8", "--cp"},
      {"--layout usp --cp 4 --ring-degree 3 --seq-len 16", "ring degree R=3 does not divide"},
      {"--layout usp --cp 4 --ring-degree 0 --seq-len 16", "--ring-degree 0: usp ring degree R"},
      {"--layout usp --cp 4 --ring-degree 1025 --seq-len 16", "R must be in [1, 1024]"},
      {"--layout ptrr --cp 2 --block-size 16777217 --seq-len 16", "B must be in [1, 16777216]"},
      {"--layout ptrr --cp 2 --block-size 16777216 --seq-len 16", "do not divide over cp=2"},
      {"--layout ptrr --cp 2 --block-size nan --seq-len 16", "--block-size"},
      // Past int64: the value as typed, not the bound CLI11 would saturate it to.
      {"--layout usp --cp 4 --ring-degree 9223372036854775808 --seq-len 16",
       "--ring-degree '9223372036854775808': outside the range of a 64-bit integer"},
      {"--layout contiguous --cp -9223372036854775809 --seq-len 16",
       "--cp: Value -9223372036854775809 is outside"},
      {"--layout per-doc-head-tail --cp 2 --doc-lens 5,3", "not a multiple of 2C=4"},
      {"--layout per-doc-head-tail --cp 2 --seq-len 10", "not a multiple of 2C=4"},
  };
  for (const auto& [args, part] : cases) {
    expect_usage_error(run_cplab("layout " + args), {part}, args);
  }
}

// SPEC §9.11 through `cplab layout --layout ptrr --block-size B`: JSON, table, picture, refusal.
TEST(CliLayout, Example11Ptrr) {
  const auto out = layout_json("--layout ptrr --cp 2 --doc-lens 4,8,4 --block-size 1");
  EXPECT_EQ(out["layout"], "ptrr");
  EXPECT_EQ(out["padded_seq_len"], 16);
  EXPECT_EQ(indices(out),
            (std::vector<Ints>{{2, 3, 5, 6, 8, 11, 12, 13}, {0, 1, 4, 7, 9, 10, 14, 15}}));
  EXPECT_EQ(out["ranks"][0]["causal_work"], 28);
  EXPECT_EQ(out["ranks"][1]["causal_work"], 28);
  const CliRun table = run_cplab("layout --layout ptrr --cp 2 --seq-len 13 --block-size 4");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("ptrr cp=2 block_size=4: padded length 16"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("assigned"), std::string::npos) << table.out;
  const std::string svg = ::testing::TempDir() + "ptrr_layout.svg";
  const CliRun picture =
      run_cplab("layout --layout ptrr --cp 2 --seq-len 16 --block-size 2 --svg " + svg);
  EXPECT_EQ(picture.status, 0) << picture.err;
  EXPECT_NE(picture.out.find("picture: " + svg), std::string::npos) << picture.out;
  expect_usage_error(run_cplab("layout --layout ptrr --cp 2 --seq-len 10 --block-size 4"),
                     {"ptrr: L=12 is 3 blocks of B=4, which do not divide over cp=2"});
  expect_usage_error(run_cplab("layout --layout ptrr --cp 2 --seq-len 10 --block-size 0"),
                     {"--block-size 0: ptrr block size B must be in [1, 16777216] at cp=2"});
}

TEST(CliLayout, EveryLayoutSideBySideIncludesPtrr) {
  const CliRun run = run_cplab("layout --layout all --cp 2 --doc-lens 4,8,4 --block-size 1 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& one : out["layouts"]) by_name[one["layout"].get<std::string>()] = one;
  ASSERT_EQ(by_name.count("ptrr"), 1u) << run.out;
  const nlohmann::json& ptrr = by_name.at("ptrr");
  EXPECT_EQ(ptrr["spec"], "ptrr cp=2 block_size=1");
  EXPECT_EQ(ptrr["causal_work"], (Ints{28, 28}));
  EXPECT_EQ(ptrr["imbalance"], 1.0);
}

// §9.12 through the CLI: llama3-varlen ranks add cu_seqlens_q, cu_seqlens_k and k_slice; other
// layouts' ranks do not have them.
TEST(CliLayout, Example12Llama3Varlen) {
  const auto out = layout_json("--layout llama3-varlen --cp 4 --doc-lens 7,6,7");
  EXPECT_EQ(out["padded_seq_len"], 20);
  EXPECT_EQ(indices(out)[2], (Ints{10, 11, 12, 13, 14}));
  const auto& rank2 = out["ranks"][2];
  EXPECT_EQ(rank2["cu_seqlens_q"], (Ints{0, 3, 5}));
  EXPECT_EQ(rank2["cu_seqlens_k"], (Ints{0, 6, 8}));
  EXPECT_EQ(rank2["k_slice"], (Ints{7, 15}));
  EXPECT_EQ(out["ranks"][1]["cu_seqlens_k"], (Ints{0, 7, 10}));
  EXPECT_EQ(out["ranks"][3]["k_slice"], (Ints{13, 20}));
  EXPECT_FALSE(rank2.contains("cu_seqlens"));
  const auto contiguous = layout_json("--layout contiguous --cp 4 --doc-lens 7,6,7");
  EXPECT_FALSE(contiguous["ranks"][0].contains("cu_seqlens_q"));
  EXPECT_FALSE(contiguous["ranks"][0].contains("k_slice"));
  expect_usage_error(run_cplab("layout --layout llama3-varlen --cp 4 --doc-lens 7,6"),
                     {"pads nothing", "S=13", "multiple of C=4"}, "llama3-varlen S=13");
}

}  // namespace
}  // namespace cplab::testing
