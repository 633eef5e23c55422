// head-tail's own checks end to end: `cplab check --layout auto` naming the zero-padded head-tail
// shards Automodel writes (check_fixture.hpp) and its BSHD files with padding_mask
// (automodel_fixtures.hpp), however many ranks; SPEC §13.2's schedule example; and a batch's own
// positions as `cplab layout` shows them.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layouts/layout_descriptor.hpp"
#include "tests/cli/automodel_check.hpp"
#include "tests/cli/check_fixture.hpp"
#include "tests/cli/schedule_json.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::run_cplab;

TEST_F(CliCheck, AutoReadsAutomodelsZeroPaddedHeadTail) {
  io::save_torch_batch(bshd_batch(13), dir.file("batch.pt"));
  const auto run = check(head_tail_zero_pad_shards(13, kCp), "auto");
  EXPECT_EQ(run.status, 0) << run.out.dump(1) << run.err;
  EXPECT_EQ(run.out["layout"], "head-tail");
  EXPECT_EQ(run.out["conventions"]["pad_policy"], "zero");
  // The same shards under the SPEC convention are wrong exactly at the padded positions.
  const auto strict = check(head_tail_zero_pad_shards(13, kCp), "head-tail", "--pad-policy spec");
  EXPECT_EQ(strict.status, 1);
  for (const auto& d : strict.out["differences"]) {
    EXPECT_EQ(d["key"], "position_ids") << d;
    EXPECT_EQ(d["kind"], "pad") << d;
  }
}

// --layout auto plans few candidates: a long row at C = 8 has over a hundred (every magi chunk
// size and ptrr block size dividing a rank's 6930 tokens); its head-tail shards are named after one
// full plan, and a fault in them still leaves the search at three at most.
TEST_F(CliCheck, AutoPlansAFewCandidatesOfALongRow) {
  constexpr std::int64_t kSeq = 55440, kRanks = 8;
  io::save_torch_batch(bshd_batch(kSeq), dir.file("batch.pt"));
  auto shards = head_tail_zero_pad_shards(kSeq, kRanks);
  auto run = check(shards, "auto", "", kRanks);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out["layout"], "head-tail");
  EXPECT_GT(run.out["candidates"].get<int>(), 100);
  EXPECT_EQ(run.out["planned"], 1);
  // Other layouts whose maps on one causal row are head-tail's are aliases, found through their
  // closed-form maps without planning them: each names another registered layout at C = 8, once
  // (which ones, each layout's own file says: layouts/ID_test.cpp).
  const std::vector<std::string> names = sim::layout_descriptor_names();
  std::vector<std::string> aliased;
  for (const auto& alias : run.out["also_explained_by"]) {
    const std::string spec = alias;
    const std::string name = spec.substr(0, spec.find(' '));
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << spec;
    EXPECT_NE(name, "head-tail") << spec;
    EXPECT_EQ(spec.substr(name.size(), 5), " cp=8") << spec;
    EXPECT_EQ(std::find(aliased.begin(), aliased.end(), name), aliased.end()) << spec;
    aliased.push_back(name);
  }
  EXPECT_FALSE(aliased.empty()) << run.out.dump(1);
  auto ids = tensor_values(shards[3][keys::input_ids]);
  std::swap(ids[5], ids[6]);
  shards[3][keys::input_ids] = row_tensor(ids);
  run = check(shards, "auto", "", kRanks);
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.out["layout"], "head-tail");
  EXPECT_LE(run.out["planned"].get<int>(), 3);
  EXPECT_EQ(first_difference(run, 3, keys::input_ids)["begin"], 5);
}

// A thousand ranks of two tokens each: every candidate is ruled out or confirmed at its samples,
// so the search plans one, as the named layout does.
TEST_F(CliCheck, AutoOnAThousandRanksPlansOne) {
  constexpr std::int64_t kSeq = 2048, kRanks = 1024;
  io::save_torch_batch(bshd_batch(kSeq), dir.file("batch.pt"));
  const auto run = check(head_tail_zero_pad_shards(kSeq, kRanks), "auto", "", kRanks);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out["layout"], "head-tail");
  EXPECT_EQ(run.out["planned"], 1);
}

// A row's own position_ids (an offset of 18) are what `cplab layout --batch` shows, as the shard
// holds them.
TEST(CliBatchFiles, TheBatchsOwnPositions) {
  if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  testsupport::ScratchDir dir;
  Ints offset(16);
  for (std::int64_t t = 0; t < 16; ++t) offset[t] = 18 + t;
  Batch bshd = bshd_batch(16);
  io::save_torch_tensors({{keys::input_ids, bshd.at(keys::input_ids)},
                          {keys::labels, bshd.at(keys::labels)},
                          {keys::position_ids, row_tensor(offset)}},
                         dir.file("bshd.pt"));
  const auto run = testsupport::run_cplab("layout --json --layout head-tail --cp 2 --batch " +
                                          dir.file("bshd.pt"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["ranks"][0]["positions"],
            nlohmann::json({18, 19, 20, 21, 30, 31, 32, 33}));
}

// SPEC §13.2's example: head-tail C = 2, L = 8, ring.
TEST(CliSchedule, JsonGivesBlocksInGlobalSlots) {
  const nlohmann::json j = schedule_json(
      "--layout head-tail --cp 2 --seq-len 8 --algo ring --heads 2 --kv-heads 1 "
      "--head-dim 4 --dtype bf16");
  EXPECT_EQ(j["layout"], "head-tail");
  EXPECT_EQ(j["algo"], "ring");
  EXPECT_EQ(j["cp"], 2);
  EXPECT_EQ(j["padded_seq_len"], 8);
  EXPECT_EQ(j["critical_path"], 36);
  EXPECT_DOUBLE_EQ(j["ideal"].get<double>(), 36.0);
  ASSERT_EQ(j["steps"].size(), 2u);
  const nlohmann::json& rank0 = j["steps"][0]["ranks"][0];
  EXPECT_EQ(rank0["rank"], 0);
  EXPECT_EQ(rank0["kv_from"], 0);
  ASSERT_EQ(rank0["blocks"].size(), 3u);
  // Buffer positions [2, 4) of rank 0 are its second chunk, global [6, 8).
  EXPECT_EQ(rank0["blocks"][1]["q"], nlohmann::json::parse("[[6,8]]"));
  EXPECT_EQ(rank0["blocks"][1]["k"], nlohmann::json::parse("[[0,2]]"));
  EXPECT_EQ(rank0["blocks"][1]["mask"], "full");
  EXPECT_EQ(rank0["blocks"][0]["mask"], "causal");
  EXPECT_EQ(rank0["work"], 20);
  const nlohmann::json& rank1 = j["steps"][1]["ranks"][1];
  EXPECT_EQ(rank1["kv_from"], 0);
  EXPECT_EQ(rank1["blocks"][0]["q"], nlohmann::json::parse("[[2,6]]"));
  EXPECT_EQ(rank1["blocks"][0]["k"], nlohmann::json::parse("[[0,2]]"));
  EXPECT_EQ(rank1["bytes_received"], 2 * 4 * 4 * 2);
  EXPECT_EQ(rank1["bytes_sent"], 2 * 4 * 4 * 2);
}

// `--algo all` compares the algorithms head-tail runs and lists the one it refuses, the usp
// algorithm (usp's ring of Ulysses groups is the usp layout's own), which alone is one line.
TEST(CliSchedule, AllComparesAndListsRefusals) {
  const auto run = run_cplab("schedule --layout head-tail --cp 4 --seq-len 64 --algo all");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("all-gather"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ulysses"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("usp         refused: head-tail refuses usp"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("critical path"), std::string::npos);
  testsupport::expect_usage_error(
      run_cplab("schedule --layout head-tail --cp 2 --seq-len 8 --algo usp"),
      {"head-tail refuses usp"});
}

// head-tail's JSON of a packed row, through the summaries and the direct JSON writer, is the
// bytes it was (a golden file written by the build before both changes).
TEST(LazyPlugins, HeadTailsJsonKeepsTheBytes) {
  const std::string args = "layout --layout head-tail --cp 4 --doc-lens 5,3,8,0,11 --json";
  const testsupport::CliRun run = run_cplab(args);
  ASSERT_EQ(run.status, 0) << args << ": " << run.err;
  EXPECT_EQ(run.out, testsupport::slurp(std::string(CPLAB_TEST_GOLDEN_DIR) +
                                        "/layout_head_tail_cp4_docs.json"))
      << args;
}

}  // namespace
}  // namespace cplab::testing

namespace cplab::testing::automodel {
namespace {

// Automodel's head-tail sharder (`make_cp_batch_and_ctx`): the batch holds BSHD rows with an HF
// `attention_mask` (1 on real tokens, right padding); the sharder pops it and gives each rank
// `padding_mask = ~attention_mask` instead, pads the row to 2C (ids 0, labels -100, positions 0,
// padding_mask True) and cuts chunks r and 2C-1-r.
// make_cp_batch_and_ctx (head-tail) on C ranks: row b of S slots has real[b] real tokens, then
// right padding (attention_mask 0, id 0, label -100); the sharder pads the row to L = ceil_to(S,
// 2C) and hands out padding_mask in place of attention_mask.
Files head_tail(const Ints& real, std::int64_t seq, std::int64_t cp) {
  const auto rows = static_cast<std::int64_t>(real.size());
  const std::int64_t len = ceil_to(seq, 2 * cp), c = len / (2 * cp);
  Files out;
  Ints ids, labels, attention;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < seq; ++s) {
      const bool is_real = s < real[b];
      ids.push_back(is_real ? 1000 + b * seq + s : 0);
      labels.push_back(is_real ? 2000 + b * seq + s : -100);
      attention.push_back(is_real ? 1 : 0);
    }
  }
  out.batch = {{"input_ids", ints({rows, seq}, ids)},
               {"labels", ints({rows, seq}, labels)},
               {"attention_mask", ints({rows, seq}, attention)}};
  out.global_of.assign(static_cast<std::size_t>(rows), {});
  for (std::int64_t r = 0; r < cp; ++r) {
    Ints local_ids, local_labels, local_positions;
    std::vector<bool> pad;
    for (std::int64_t b = 0; b < rows; ++b) {
      Ints index;
      for (std::int64_t chunk : {r, 2 * cp - 1 - r}) {
        for (std::int64_t g = chunk * c; g < (chunk + 1) * c; ++g) index.push_back(g);
      }
      for (std::int64_t g : index) {
        const bool added = g >= seq;
        local_ids.push_back(added ? 0 : ids[b * seq + g]);
        local_labels.push_back(added ? -100 : labels[b * seq + g]);
        local_positions.push_back(added ? 0 : g);
        pad.push_back(added || attention[b * seq + g] == 0);
      }
      out.global_of[b].push_back(index);
    }
    out.ranks.push_back({{"input_ids", ints({rows, 2 * c}, local_ids)},
                         {"labels", ints({rows, 2 * c}, local_labels)},
                         {"position_ids", ints({rows, 2 * c}, local_positions)},
                         {"padding_mask", Tensor::from_bools({rows, 2 * c}, pad)}});
  }
  return out;
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

}  // namespace
}  // namespace cplab::testing::automodel
