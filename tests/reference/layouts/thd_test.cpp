// thd (SPEC §3.4): the worked examples of §9.3 and §9.4 by the reference and through `cplab
// layout`; its row facts, its load balance, its padding inside documents, its verbs and refusals.
#include <algorithm>

#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"
#include "tests/reference/verbs_support.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

TEST(SpecExample3, ThdDocuments5And3And8AtCp2) {
  const Ints docs{5, 3, 8};
  const RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 12, 20}));
  Ints chunks;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    chunks.push_back((row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]) / 4);
  }
  EXPECT_EQ(chunks, (Ints{2, 1, 2}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 6, 7, 8, 11, 12, 13, 18, 19}));
  EXPECT_EQ(row.index[1], (Ints{2, 3, 4, 5, 9, 10, 14, 15, 16, 17}));
  EXPECT_EQ(row.local_cu_seqlens, (std::vector<Ints>{{0, 4, 6, 10}, {0, 4, 6, 10}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 1, 6, 7, 0, 3, 0, 1, 6, 7}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{2, 3, 4, 5, 1, 2, 2, 3, 4, 5}));
}

TEST(SpecExample4, ThdDocuments4And12BalanceWork) {
  const Ints docs{4, 12};
  RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(causal_work(row), (Ints{44, 44}));
  // The document-major bug: every document's chunks in rank order, then cut into equal halves.
  Ints document_major;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    for (const Ints& local : row.index) {
      for (std::int64_t g : local) {
        if (g >= row.cu_seqlens_padded[i] && g < row.cu_seqlens_padded[i + 1])
          document_major.push_back(g);
      }
    }
  }
  row.index = {Ints(document_major.begin(), document_major.begin() + 8),
               Ints(document_major.begin() + 8, document_major.end())};
  EXPECT_EQ(causal_work(row), (Ints{26, 62}));
}

using I32s = std::vector<std::int32_t>;

TEST(RowFacts, ThdRelaysDocumentsAndMovesTheirTokens) {
  // Caller: [5 real + 1 pad][3 real + 1 pad][3 row padding]. thd at C=2: P = 8, 4; L = 16, the
  // extra 4 slots go to the last document.
  const Ints docs{5, 3}, padded{6, 4};
  const RowPlan row = plan_row(make_spec("thd", 2), 13, &docs, &padded);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 16}));
  EXPECT_EQ(row.local_cu_seqlens, (std::vector<Ints>{{0, 4, 8}, {0, 4, 8}}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, -1, -1, -1, 6, 7, 8, -1, -1, -1, -1, -1}));
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 6, 7, 8, 9, 14, 15}, {2, 3, 4, 5, 10, 11, 12, 13}}));
}

TEST(RowFacts, ThdAtCp1KeepsTheCallersDocuments) {
  const Ints docs{3, 5}, padded{4, 5};
  EXPECT_EQ(plan_row(make_spec("thd", 1), 11, &docs, &padded).local_cu_seqlens,
            (std::vector<Ints>{{0, 4, 9}}));
}

TEST(RowFacts, ThdValidTokensFollowTheClampFormula) {
  for (std::int64_t cp : {2, 3, 4}) {
    for (const Ints& docs : std::vector<Ints>{{5, 3, 8}, {1, 0, 13}, {6}, {2, 9, 4, 7}}) {
      SCOPED_TRACE(::testing::Message()
                   << "cp=" << cp << " docs=" << ::testing::PrintToString(docs));
      const RowPlan row = plan_row(make_spec("thd", cp), sum(docs), &docs);
      for (std::int64_t r = 0; r < cp; ++r) {
        std::int64_t expected = 0;
        for (std::size_t i = 0; i < docs.size(); ++i) {
          const std::int64_t c =
              (row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]) / (2 * cp);
          expected += std::clamp(docs[i] - r * c, std::int64_t{0}, c) +
                      std::clamp(docs[i] - (2 * cp - 1 - r) * c, std::int64_t{0}, c);
        }
        EXPECT_EQ(row.valid_tokens[r], expected) << "rank " << r;
      }
    }
  }
}

TEST(LoadBalance, ThdEqualWithinEveryUnpaddedDocument) {
  const Ints docs{8, 24, 16};
  const RowPlan row = plan_row(make_spec("thd", 4), sum(docs), &docs);
  const Ints visible = reference::visible_keys(row);
  for (std::int32_t doc = 1; doc <= 3; ++doc) {
    Ints per_rank;
    for (const Ints& local : row.index) {
      std::int64_t work = 0;
      for (std::int64_t g : local) work += row.doc_ids[g] == doc ? visible[g] : 0;
      per_rank.push_back(work);
    }
    EXPECT_TRUE(std::all_of(per_rank.begin(), per_rank.end(),
                            [&](std::int64_t w) { return w == per_rank[0]; }))
        << "document " << doc << ": " << ::testing::PrintToString(per_rank);
  }
}

TEST(PinnedLength, ThdUsesAPinnedRowLength) {
  const Ints docs{5, 3, 8};
  const RowPlan row = reference::plan_row(make_spec("thd", 2), 16, &docs, nullptr, 24);
  EXPECT_EQ(row.padded_len, 24);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 12, 24}));
  EXPECT_EQ(row.doc_ids[23], 3) << "row padding belongs to the last document";
}

TEST(PadInsideDocuments, ThdPadsEachDocument) {
  LayoutSpec spec = make_spec("thd", 2);
  spec.pad_token_id = 9;
  Batch batch = packed_batch({{3, 2}}, 5);
  Tensor positions(DType::i64, {1, 5});
  const Ints caller_positions{0, 1, 2, 0, 1};
  for (std::int64_t s = 0; s < 5; ++s) positions.set(s, static_cast<double>(caller_positions[s]));
  batch.add(keys::position_ids, positions);
  const ShardPlan plan = reference::plan(spec, batch);
  ASSERT_EQ(plan.rows[0].caller_pos, (Ints{0, 1, 2, -1, 3, 4, -1, -1}));
  auto global = [&](const char* key) {
    const Tensor t = reference::pad_to_global(plan, batch.tokens.at(key));
    std::vector<double> out;
    for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
    return out;
  };
  EXPECT_EQ(global(keys::input_ids), (std::vector<double>{0, 1, 2, 9, 3, 4, 9, 9}));
  EXPECT_EQ(global(keys::labels), (std::vector<double>{0, 1, 2, -100, 3, 4, -100, -100}));
  EXPECT_EQ(global(keys::position_ids), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(global(keys::loss_mask), (std::vector<double>{1, 1, 1, 0, 1, 1, 0, 0}));
}

TEST(Microbatches, PackedRowsArePartitionedOnTheirOwn) {
  LayoutSpec spec = make_spec("thd", 2);
  spec.microbatches = 2;
  spec.pad_token_id = -1;
  const Batch batch = packed_batch({{5, 3, 8}, {9, 9}}, 20);
  const ShardPlan plan = reference::plan(spec, batch);
  EXPECT_EQ(plan.rows[0].padded_len, 20);
  EXPECT_EQ(plan.rows[1].padded_len, 24);
  EXPECT_EQ(plan.rows[1].local_cu_seqlens[0], (Ints{0, 6, 12}));
  const auto sharded = reference::shard_batch(plan, batch);
  for (std::int64_t m = 0; m < 2; ++m) {
    for (std::int64_t r = 0; r < 2; ++r) {
      const Tensor ids = sharded[m][r].at(keys::input_ids);
      const std::int64_t local = plan.rows[m].padded_len / 2;
      ASSERT_EQ(ids.shape(), (Shape{1, local}));
      for (std::int64_t k = 0; k < local; ++k)
        EXPECT_EQ(ids.get(k), expected_local(plan.rows[m], m, r, k, -1.0));
    }
  }
  EXPECT_ERROR(reference::pad_to_global(plan, batch.tokens.at(keys::labels)), "L=24", "L=20",
               "microbatch_plan");
}

TEST(ShardTokenTensor, ThdRowsNeedNoFill) {
  const Batch batch = packed_batch({{5, 3}}, 10, {{6, 4}});
  const ShardPlan plan = reference::plan(make_spec("thd", 2), batch);
  const auto sharded = reference::shard_batch(plan, batch);
  for (std::int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(reference::shard_token_tensor(plan, batch.at(keys::labels), 1, -100.0, r),
              sharded[0][r].at(keys::labels));
    const Tensor ids =
        reference::shard_token_tensor(plan, batch.at(keys::input_ids), 1, std::nullopt, r);
    for (std::int64_t k = 0; k < ids.numel(); ++k)
      EXPECT_EQ(ids.get(k), expected_local(plan.rows[0], 0, r, k, 0.0));
  }
}

TEST(PlanErrors, ThdNeedsDocuments) {
  EXPECT_ERROR(plan_row(make_spec("thd", 2), 8), "thd", "BSHD row of S=8");
  const Ints none;
  EXPECT_ERROR(plan_row(make_spec("thd", 2), 8, &none), "no documents", "S=8");
}

TEST(PlanErrors, PinnedLengthsThatCannotWork) {
  const Ints docs{5, 3, 8};
  EXPECT_ERROR(plan_row(make_spec("thd", 2), 16, &docs, nullptr, 22), "L=22", "multiple of 2C=4");
  EXPECT_ERROR(plan_row(make_spec("thd", 2), 16, &docs, nullptr, 16), "needs L=20",
               "pinned row length 16");
}

// SPEC §9.3 and §9.4 through `cplab layout`.
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

TEST(CliLayout, TableNamesEveryRank) {
  const testsupport::CliRun run =
      testsupport::run_cplab("layout --layout thd --cp 2 --doc-lens 5,3,8");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("[0, 1, 6, 7, 8, 11, 12, 13, 18, 19]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cu_seqlens [0, 4, 6, 10]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("padded length 20"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace cplab::testing
