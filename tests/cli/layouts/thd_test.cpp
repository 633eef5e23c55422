// thd's own checks end to end: `cplab check` on the shards a thd sharder writes (check_fixture.hpp,
// built from SPEC's formulas) and on the files Automodel's THD path writes
// (automodel_fixtures.hpp), clean and with one planted bug each, under --layout thd and --layout
// auto; thd's map of a packed batch file as `cplab layout` shows it and its picture as `cplab
// explain` draws it; and the bound on the slots its document padding may take.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/automodel_check.hpp"
#include "tests/cli/check_fixture.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::run_cplab;

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

// Batch files as Automodel's collater writes them: seq_lens end in -1000 (any negative sentinel).
TEST(CliBatchFiles, AnyNegativeSentinel) {
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
}

// thd pads every document to a multiple of 2C: at C = 1024 a row of 17000 one-token documents may
// pad past cplab's limit of slots, which is one line before anything is built.
TEST(BadInput, ThdsDocumentPaddingPastTheLimit) {
  std::string ones = "1";
  for (int i = 1; i < 17000; ++i) ones += ",1";
  const auto run = run_cplab("layout --layout thd --cp 1024 --doc-lens " + ones);
  testsupport::expect_refusal(
      run,
      "cplab: error: thd cp=1024: a row of S=17000 with 17000 documents may pad to 34834432 "
      "slots, more than cplab's limit of 33554432",
      "--doc-lens of 17000 ones");
}

// thd's picture of documents 5, 3, 8 at C = 2 (SPEC §9 example 3): L = 20 band cells, and the loss
// targets each rank fetches marked where `explain` says: rank 0 local 1 (global 1), 4 (global 8)
// and 7 (global 13); rank 1 local 9 (global 17).
TEST(CliExplain, ThdsSvgMarksTheTargetsItFetches) {
  if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  testsupport::ScratchDir dir;
  io::save_torch_batch(packed_batch({5, 3, 8}, true), dir.file("batch.pt"));
  const auto run = run_cplab("explain --batch " + dir.file("batch.pt") +
                             " --layout thd --cp 2 --format svg --out " + dir.file("thd.svg"));
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string svg = testsupport::slurp(dir.file("thd.svg"));
  std::int64_t cells = 0;
  for (std::size_t at = svg.find("class=\"cell\""); at != std::string::npos;
       at = svg.find("class=\"cell\"", at + 1))
    ++cells;
  EXPECT_EQ(cells, 20);  // L = 20
  static const std::regex mark(R"re(data-kind="fetched" data-rank="([0-9]+)" data-k="([0-9]+)")re");
  std::vector<std::string> fetched;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), mark); it != std::sregex_iterator();
       ++it)
    fetched.push_back((*it)[1].str() + ":" + (*it)[2].str());
  EXPECT_EQ(fetched, (std::vector<std::string>{"0:1", "0:4", "0:7", "1:9"}));
}

// `cplab replay` of SPEC §9 example 3 prints its slots, the document padding marked, with every
// property holding.
TEST(ReplayCli, ThdRowsComeAsDocs) {
  const testsupport::CliRun good = testsupport::run_cplab("replay 'thd cp=2 docs=5,3,8'");
  EXPECT_EQ(good.status, 0) << good.out;
  // r0 [0,1,6,7, 8,11, 12,13,18,19].
  EXPECT_NE(good.out.find("rank 0: slots [0 1 6:pad 7:pad 8 11:pad 12 13 18 19]"),
            std::string::npos)
      << good.out;
  EXPECT_TRUE(testsupport::every_property_holds(good.out)) << good.out;
}

// `explain` of documents 5, 3, 8 at C = 2 (SPEC §9 example 3): rank 0 holds these runs and
// fetches the targets of global 1 (document 1's head chunk end), 8 and 13 from rank 1.
TEST(CliExplain, ThdsExampleThreeRunsAndFetchedTargets) {
  const testsupport::CliRun run =
      testsupport::run_cplab("explain --layout thd --cp 2 --doc-lens 5,3,8");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("rank 0: global [0,2) [6,9) [11,14) [18,20)"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("targets fetched: from rank 1 for global 1, 8, 13"), std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace cplab::testing

namespace cplab::testing::automodel {
namespace {

// Automodel's THD sharder (`make_cp_batch_for_te`): the batch holds packed rows [B, S] whose
// documents the collater padded to multiples of 2C (`seq_lens`, `seq_lens_padded` [B, n] ending
// in -1000) and the entry `qkv_format: "thd"`. Each rank holds input_ids, labels and position_ids
// cut by TE's `thd_get_partitioned_indices` (head and tail chunk of every document),
// `cu_seqlens`: the row's whole padded table as int32, `max_seqlen`: an int32 scalar, the longest
// padded document, `padding_mask`: `input_ids == pad id`, and `qkv_format`, `cp_size`, `cp_rank`
// as plain values. With one row the tokens are [ℓ] and the table [n+1]; with several
// (num_chunks = B) every key is stacked: tokens [B, ℓ], `cu_seqlens` [B, n_max + 1] right-filled
// with -1000, `max_seqlen` [B].
// make_cp_batch_for_te on C ranks: every row holds `docs[b]`, each padded to 2C, the last padded
// further so that every row has S slots (S a multiple of 2C, at least the padded documents).
Files thd(const std::vector<Ints>& docs, std::int64_t cp, std::int64_t seq) {
  const auto rows = static_cast<std::int64_t>(docs.size());
  Files out;
  Ints ids, labels, positions;
  std::vector<Ints> lens, padded_lens, cu_rows;
  Ints max_seqlen;
  out.global_of.resize(docs.size());
  std::vector<Ints> local_ids(cp), local_labels(cp), local_positions(cp);
  for (std::int64_t b = 0; b < rows; ++b) {
    Ints padded;
    for (std::int64_t n : docs[b]) padded.push_back(ceil_to(n, 2 * cp));
    std::int64_t total = 0;
    for (std::int64_t p : padded) total += p;
    padded.back() += seq - total;
    Ints cu = {0};
    for (std::size_t i = 0; i < padded.size(); ++i) {
      for (std::int64_t j = 0; j < padded[i]; ++j) {
        const std::int64_t s = cu.back() + j;
        const bool real = j < docs[b][i];
        ids.push_back(real ? 1000 + b * seq + s : 0);
        labels.push_back(real ? 2000 + b * seq + s : -100);
        positions.push_back(j);
      }
      cu.push_back(cu.back() + padded[i]);
    }
    for (std::int64_t r = 0; r < cp; ++r) {
      Ints index;
      for (std::size_t i = 0; i < padded.size(); ++i) {
        const std::int64_t c = padded[i] / (2 * cp);
        for (std::int64_t chunk : {r, 2 * cp - 1 - r}) {
          for (std::int64_t k = 0; k < c; ++k) index.push_back(cu[i] + chunk * c + k);
        }
      }
      for (std::int64_t g : index) {
        local_ids[r].push_back(ids[b * seq + g]);
        local_labels[r].push_back(labels[b * seq + g]);
        local_positions[r].push_back(positions[b * seq + g]);
      }
      out.global_of[b].push_back(index);
    }
    lens.push_back(docs[b]);
    padded_lens.push_back(padded);
    cu_rows.push_back(cu);
    max_seqlen.push_back(*std::max_element(padded.begin(), padded.end()));
  }
  out.batch = {{"input_ids", ints({rows, seq}, ids)},
               {"labels", ints({rows, seq}, labels)},
               {"position_ids", ints({rows, seq}, positions)},
               {"seq_lens", filled_rows(lens, kFiller, DType::i64)},
               {"seq_lens_padded", filled_rows(padded_lens, kFiller, DType::i64)},
               {"qkv_format", std::string("thd")}};
  const std::int64_t local = seq / cp;
  const Shape tokens = rows == 1 ? Shape{local} : Shape{rows, local};
  for (std::int64_t r = 0; r < cp; ++r) {
    std::vector<bool> pad;
    for (std::int64_t id : local_ids[r]) pad.push_back(id == 0);
    Dict rank = {{"input_ids", ints(tokens, local_ids[r])},
                 {"labels", ints(tokens, local_labels[r])},
                 {"position_ids", ints(tokens, local_positions[r])},
                 {"padding_mask", Tensor::from_bools(tokens, pad)},
                 {"qkv_format", std::string("thd")},
                 {"cp_size", cp},
                 {"cp_rank", r}};
    if (rows == 1) {
      rank["cu_seqlens"] = int32s({static_cast<std::int64_t>(cu_rows[0].size())}, cu_rows[0]);
      rank["max_seqlen"] = int32s({}, {max_seqlen[0]});
    } else {
      rank["cu_seqlens"] = filled_rows(cu_rows, kFiller, DType::i32);
      rank["max_seqlen"] = int32s({rows}, max_seqlen);
    }
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

using testsupport::run_cplab;

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
