// `cplab check` end to end: a packed batch and the shards a thd sharder would write for it (built
// here from SPEC's formulas, saved with libtorch's pickle_save as torch.save would), clean and with
// one planted bug each. Every bug must be flagged at its exact slot, with --layout thd and with
// --layout auto; clean shards must pass; unreadable input exits 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "layouts/ptrr.hpp"
#include "layouts/usp.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "tests/cli/check_run.hpp"
#include "tests/cli/shard_fixtures.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;

const Ints kDocs = {5, 3, 8};  // thd cp=2: padded 8, 4, 8; r0 [0,1,6,7,8,11,12,13,18,19]
constexpr std::int64_t kCp = 2;

class CliCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
    io::save_torch_batch(packed_batch(kDocs), dir.file("batch.pt"));
    clean = thd_shards(kDocs, kCp);
  }

  // Writes the shards and runs `cplab check --json` on them.
  CheckRun check(const std::vector<ShardDict>& shards, const std::string& layout,
                 const std::string& extra = "", std::int64_t cp = kCp) {
    std::string paths;
    for (std::size_t r = 0; r < shards.size(); ++r) {
      const std::string path = dir.file("rank" + std::to_string(r) + ".pt");
      io::save_torch_tensors(shards[r], path);
      paths += " " + path;
    }
    const auto run =
        run_cplab("check --json --batch " + dir.file("batch.pt") + " --shards" + paths + " --cp " +
                  std::to_string(cp) + " --layout " + layout + " " + extra);
    CheckRun out{run.status, nlohmann::json::object(), run.err};
    if (!run.out.empty()) out.out = nlohmann::json::parse(run.out);
    return out;
  }

  ScratchDir dir;
  ThdShards clean;
};

TEST_F(CliCheck, CleanShardsMatchThdAndAutoNamesThd) {
  const auto named = check(clean.ranks, "thd");
  EXPECT_EQ(named.status, 0) << named.out.dump(1) << named.err;
  EXPECT_EQ(named.out["match"], true);
  EXPECT_EQ(named.out["conventions"]["cu_seqlens"], "local");
  EXPECT_EQ(named.out["conventions"]["pad_id"], 0);
  const auto found = check(clean.ranks, "auto");
  EXPECT_EQ(found.status, 0) << found.out.dump(1) << found.err;
  EXPECT_EQ(found.out["layout"], "thd");
  EXPECT_EQ(found.out["auto"], true);
}

// Each planted bug, checked under the named layout and under auto (which must still pick thd as
// the closest and flag the same slot).
class PlantedBug : public CliCheck, public ::testing::WithParamInterface<const char*> {};

TEST_P(PlantedBug, SwappedTokensAreFlaggedAtBothSlots) {
  auto shards = clean.ranks;
  auto ids = tensor_values(shards[1][keys::input_ids]);
  std::swap(ids[1], ids[4]);  // global 3 and global 9
  shards[1][keys::input_ids] = row_tensor(ids);
  const auto run = check(shards, GetParam());
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.out["layout"], "thd");
  ASSERT_EQ(run.out["differences"].size(), 2u) << run.out.dump(1);
  const auto a = run.out["differences"][0], b = run.out["differences"][1];
  EXPECT_EQ(a["rank"], 1);
  EXPECT_EQ(a["key"], "input_ids");
  EXPECT_EQ(a["kind"], "slot");
  EXPECT_EQ(a["begin"], 1);
  EXPECT_EQ(a["should_hold"], nlohmann::json({3}));
  EXPECT_EQ(a["holds"], nlohmann::json({9}));
  EXPECT_EQ(b["begin"], 4);
  EXPECT_EQ(b["should_hold"], nlohmann::json({9}));
  EXPECT_EQ(b["holds"], nlohmann::json({3}));
}

TEST_P(PlantedBug, LabelsShiftedAfterTheSplitAreFlaggedFromTheFirstSlot) {
  auto shards = clean.ranks;
  auto labels = tensor_values(shards[0][keys::labels]);
  labels.erase(labels.begin());  // the HF shift done locally, after the split
  labels.push_back(-100);
  shards[0][keys::labels] = row_tensor(labels);
  const auto run = check(shards, GetParam());
  EXPECT_EQ(run.status, 1) << run.err;
  const auto d = first_difference(run, 0, "labels");
  EXPECT_EQ(d["begin"], 0);
  EXPECT_EQ(d["should_hold"][0], 0);
  EXPECT_EQ(d["holds"][0], 1);
  EXPECT_NE(d["message"].get<std::string>().find("shifted by +1"), std::string::npos) << d;
}

TEST_P(PlantedBug, APadHoldingARealIdIsFlaggedAtThatPad) {
  auto shards = clean.ranks;
  auto ids = tensor_values(shards[0][keys::input_ids]);
  ASSERT_EQ(clean.global_of[0][2], 6);  // document 1's padding
  ids[2] = 1003;                        // the id of global 3
  shards[0][keys::input_ids] = row_tensor(ids);
  const auto run = check(shards, GetParam());
  EXPECT_EQ(run.status, 1) << run.err;
  ASSERT_EQ(run.out["differences"].size(), 1u) << run.out.dump(1);
  const auto d = run.out["differences"][0];
  EXPECT_EQ(d["rank"], 0);
  EXPECT_EQ(d["kind"], "pad");
  EXPECT_EQ(d["begin"], 2);
  EXPECT_EQ(d["end"], 3);
  EXPECT_EQ(d["should_hold"], nlohmann::json({6}));
  EXPECT_EQ(d["holds"], nlohmann::json({3}));
}

TEST_P(PlantedBug, PositionsRestartedPerRankAreFlaggedAsComputedAfterTheCut) {
  auto shards = clean.ranks;
  Ints arange(clean.global_of[1].size());
  for (std::size_t k = 0; k < arange.size(); ++k) arange[k] = static_cast<std::int64_t>(k);
  shards[1][keys::position_ids] = row_tensor(arange);
  const auto run = check(shards, GetParam());
  EXPECT_EQ(run.status, 1) << run.err;
  const auto d = first_difference(run, 1, "position_ids");
  EXPECT_EQ(d["begin"], 0);
  EXPECT_EQ(d["should_hold"][0], 2);
  EXPECT_NE(d["message"].get<std::string>().find("positions computed after the cut"),
            std::string::npos)
      << d;
  for (const auto& other : run.out["differences"]) EXPECT_EQ(other["rank"], 1) << other;
}

TEST_P(PlantedBug, CuSeqlensFromUnpaddedLengthsAreFlaggedAtTheFirstWrongEntry) {
  auto shards = clean.ranks;
  const std::vector<std::int32_t> unpadded = {0, 5, 8, 16};
  shards[0]["cu_seqlens"] = Tensor::from<std::int32_t>({4}, unpadded);
  const auto run = check(shards, GetParam());
  EXPECT_EQ(run.status, 1) << run.err;
  ASSERT_EQ(run.out["differences"].size(), 1u) << run.out.dump(1);
  const auto d = run.out["differences"][0];
  EXPECT_EQ(d["rank"], 0);
  EXPECT_EQ(d["kind"], "cu_seqlens");
  EXPECT_EQ(d["begin"], 1);
  EXPECT_NE(d["message"].get<std::string>().find("unpadded"), std::string::npos) << d;
}

INSTANTIATE_TEST_SUITE_P(NamedAndAuto, PlantedBug, ::testing::Values("thd", "auto"));

TEST_F(CliCheck, MasksTheSharderAddsAreCheckedAgainstTheDocuments) {
  auto shards = clean.ranks;
  for (std::size_t r = 0; r < shards.size(); ++r) {
    std::vector<bool> pad;
    for (std::int64_t g : clean.global_of[r]) pad.push_back(clean.global_ids[g] == 0);
    shards[r][keys::padding_mask] = Tensor::from_bools({1, 10}, pad);
  }
  auto run = check(shards, "thd");
  EXPECT_EQ(run.status, 0) << run.out.dump(1);
  auto pad = tensor_values(shards[1][keys::padding_mask]);
  pad[0] = 1;  // global 2, a real token, marked as padding
  shards[1][keys::padding_mask] =
      Tensor::from_bools({1, 10}, std::vector<bool>(pad.begin(), pad.end()));
  run = check(shards, "thd");
  EXPECT_EQ(run.status, 1);
  const auto d = first_difference(run, 1, "padding_mask");
  EXPECT_EQ(d["begin"], 0);
  EXPECT_EQ(d["should_hold"], nlohmann::json({2}));
}

TEST_F(CliCheck, KeysShapesAndDtypesAreChecked) {
  auto shards = clean.ranks;
  shards[0].erase(keys::labels);
  shards[1]["attention_mask"] = row_tensor(Ints(10, 1));
  shards[1][keys::input_ids] = shards[1][keys::input_ids].to(DType::i32);
  const auto run = check(shards, "thd");
  EXPECT_EQ(run.status, 1);
  std::vector<std::string> kinds;
  for (const auto& d : run.out["differences"]) kinds.push_back(d["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"missing_key", "dtype", "extra_key"}))
      << run.out.dump(1);
}

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
  // On one causal row magi's and ptrr's 16 chunks, per-doc-head-tail and usp with R = C are
  // head-tail too: aliases, found through their closed-form maps without planning them.
  EXPECT_EQ(run.out["also_explained_by"],
            nlohmann::json({"magi cp=8 chunk_size=3465", "per-doc-head-tail cp=8",
                            "ptrr cp=8 block_size=3465", "usp cp=8 ring_degree=8"}));
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

// The shards the reference plan of `spec` gives for a BSHD batch, one dict per rank.
std::vector<ShardDict> reference_shards(const LayoutSpec& spec, const Batch& batch) {
  std::vector<ShardDict> out;
  const auto sharded = reference::shard_batch(reference::plan(spec, batch), batch);
  for (const Batch& local : sharded[0]) {
    ShardDict dict;
    for (const auto& [key, field] : local.tokens) dict[key] = field.value;
    out.push_back(std::move(dict));
  }
  return out;
}

// Options that only one layout reads are searched too: usp's ring degree R (each R dividing C)
// and ptrr's block size B (each B dividing a rank's tokens), neither of them the default.
TEST_F(CliCheck, AutoFindsUspsRingDegreeAndPtrrsBlockSize) {
  const Batch batch = bshd_batch(32);
  io::save_torch_batch(batch, dir.file("batch.pt"));
  LayoutSpec usp;
  usp.layout = "usp";
  usp.cp = 4;
  layouts::usp_ring_degree.set(usp, 2);
  const auto found_usp = check(reference_shards(usp, batch), "auto", "", 4);
  EXPECT_EQ(found_usp.status, 0) << found_usp.out.dump(1) << found_usp.err;
  EXPECT_EQ(found_usp.out["spec"], "usp cp=4 ring_degree=2") << found_usp.out.dump(1);
  LayoutSpec ptrr;
  ptrr.layout = "ptrr";
  ptrr.cp = 2;
  layouts::ptrr_block_size.set(ptrr, 2);
  const auto found_ptrr = check(reference_shards(ptrr, batch), "auto");
  EXPECT_EQ(found_ptrr.status, 0) << found_ptrr.out.dump(1) << found_ptrr.err;
  // On one causal document ptrr's blocks of 2 are magi's chunks of 2: named, or an alias of it.
  std::vector<std::string> names = {found_ptrr.out["spec"]};
  for (const auto& also : found_ptrr.out["also_explained_by"]) names.push_back(also);
  EXPECT_NE(std::find(names.begin(), names.end(), "ptrr cp=2 block_size=2"), names.end())
      << found_ptrr.out.dump(1);
}

TEST_F(CliCheck, GatheredOutputsAreCheckedTrimmedOrNot) {
  const std::string gathered = dir.file("gathered.pt");
  const Batch batch = packed_batch(kDocs);
  io::save_torch_tensors({{keys::input_ids, batch.at(keys::input_ids)}}, gathered);
  const std::string base = "check --json --batch " + dir.file("batch.pt") +
                           " --layout thd --cp 2 --gathered " + gathered;
  auto run = run_cplab(base);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  io::save_torch_tensors({{keys::input_ids, row_tensor(clean.global_ids)}}, gathered);
  run = run_cplab(base);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  Ints wrong = clean.global_ids;
  std::swap(wrong[12], wrong[13]);
  io::save_torch_tensors({{keys::input_ids, row_tensor(wrong)}}, gathered);
  run = run_cplab(base);
  EXPECT_EQ(run.status, 1);
  const auto out = nlohmann::json::parse(run.out);
  ASSERT_EQ(out["differences"].size(), 1u) << out.dump(1);
  EXPECT_EQ(out["differences"][0]["begin"], 12);
  EXPECT_EQ(out["differences"][0]["holds"], nlohmann::json({13, 12}));
}

TEST_F(CliCheck, UnreadableInputExitsTwoWithOneLine) {
  io::save_torch_tensors(clean.ranks[0], dir.file("rank0.pt"));
  {
    std::ofstream junk(dir.file("junk.pt"));
    junk << "not a zip";
  }
  const std::string batch = " --batch " + dir.file("batch.pt");
  expect_usage_error(run_cplab("check --layout thd --cp 2" + batch + " --shards " +
                               dir.file("rank0.pt") + " " + dir.file("junk.pt")),
                     {"junk.pt"});
  expect_usage_error(
      run_cplab("check --layout thd --cp 2" + batch + " --shards " + dir.file("rank0.pt")),
      {"--shards", "1 files", "--cp 2"});
  expect_usage_error(run_cplab("check --layout nope --cp 2" + batch + " --shards a b"), {"nope"});
  expect_usage_error(
      run_cplab("check --layout thd --cp 2 --batch " + dir.file("junk.pt") + " --shards a b"),
      {"junk.pt"});
}

}  // namespace
}  // namespace cplab::testing

namespace cplab::testing {
namespace {

// Batch files as Automodel's collater writes them: seq_lens end in -1000, and a row's own
// position_ids (an offset of 18) are what `cplab layout --batch` shows, as the shard holds them.
TEST(CliBatchFiles, AnyNegativeSentinelAndTheBatchsOwnPositions) {
  if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  testsupport::ScratchDir dir;
  const Batch packed = packed_batch({5, 3, 8});
  io::save_torch_tensors(
      {{keys::input_ids, packed.at(keys::input_ids)},
       {keys::labels, packed.at(keys::labels)},
       {"seq_lens", Tensor::from<std::int64_t>({1, 5}, {5, 3, 8, -1000, -1000})}},
      dir.file("packed.pt"));
  auto run =
      testsupport::run_cplab("layout --json --layout thd --cp 2 --batch " + dir.file("packed.pt"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["ranks"][0]["indices"],
            nlohmann::json({0, 1, 6, 7, 8, 11, 12, 13, 18, 19}));
  io::save_torch_tensors({{keys::input_ids, packed.at(keys::input_ids)},
                          {keys::labels, packed.at(keys::labels)},
                          {"seq_lens", Tensor::from<std::int64_t>({1, 4}, {5, -1000, 3, 8})}},
                         dir.file("bad.pt"));
  testsupport::expect_usage_error(
      testsupport::run_cplab("layout --layout thd --cp 2 --batch " + dir.file("bad.pt")),
      {"seq_lens", "after"});

  Ints offset(16);
  for (std::int64_t t = 0; t < 16; ++t) offset[t] = 18 + t;
  Batch bshd = bshd_batch(16);
  io::save_torch_tensors({{keys::input_ids, bshd.at(keys::input_ids)},
                          {keys::labels, bshd.at(keys::labels)},
                          {keys::position_ids, row_tensor(offset)}},
                         dir.file("bshd.pt"));
  run = testsupport::run_cplab("layout --json --layout head-tail --cp 2 --batch " +
                               dir.file("bshd.pt"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["ranks"][0]["positions"],
            nlohmann::json({18, 19, 20, 21, 30, 31, 32, 33}));
}

}  // namespace
}  // namespace cplab::testing
