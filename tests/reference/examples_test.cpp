// SPEC §9: the worked examples of the first layouts and of the loss (§9.1–§9.8), with exactly
// the numbers given there; each later layout's are in its own tests/reference/layouts/ID_test.cpp.
#include <cmath>

#include "reference/loss.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"
#include "support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

Ints local_values(const RowPlan& row, const Ints& values, std::int64_t rank) {
  Ints out;
  for (std::int64_t g : row.index[rank]) out.push_back(values[g]);
  return out;
}

TEST(SpecExample1, HeadTailCp4OnSixteenTokens) {
  const RowPlan row = plan_row(make_spec("head-tail", 4), 16);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
  EXPECT_EQ(causal_work(row), (Ints{34, 34, 34, 34}));
}

TEST(SpecExample1, HeadTailCp2OnEightTokens) {
  EXPECT_EQ(plan_row(make_spec("head-tail", 2), 8).index,
            (std::vector<Ints>{{0, 1, 6, 7}, {2, 3, 4, 5}}));
}

TEST(SpecExample1, OwnerOfSlot13AtCp2) {
  const RowPlan row =
      plan_row(make_spec("head-tail", 2), 16);  // c = 4: q = 3 >= C, rank 0, offset 5
  EXPECT_EQ(row.index[0][5], 13);
}

TEST(SpecExample2, ContiguousPadsSixTokensToEight) {
  LayoutSpec spec = make_spec("contiguous", 2);
  spec.pad_token_id = 7;
  const Batch batch = bshd_batch(1, 6);
  const ShardPlan plan = reference::plan(spec, batch);
  ASSERT_EQ(plan.rows[0].padded_len, 8);
  EXPECT_EQ(plan.rows[0].index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const Batch rank1 = reference::shard_batch(plan, batch)[0][1];
  // Rank 1 holds slots 4..7: caller tokens 4, 5, then the pad slots 6, 7.
  EXPECT_EQ(rank1.at(keys::input_ids).to_vector<std::int64_t>(), (Ints{4, 5, 7, 7}));
  EXPECT_EQ(rank1.at(keys::labels).to_vector<std::int64_t>(), (Ints{4, 5, -100, -100}));
  EXPECT_EQ(rank1.at(keys::position_ids).to_vector<std::int64_t>(), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(rank1.at(keys::loss_mask).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{1, 1, 0, 0}));
}

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

TEST(SpecExample5, MagiOneCausalDocument) {
  const RowPlan row = plan_row(make_spec("magi", 4), 32);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 42, 58, 74, 90, 106, 122}));
  for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(row.map_costs[j], 16 * j + 10);
  // The assignment, rank-major: rank 0 {0, 7}, rank 1 {1, 6}, rank 2 {2, 5}, rank 3 {3, 4}.
  EXPECT_EQ(row.map.table, (Ints{0, 7, 1, 6, 2, 5, 3, 4}));
  EXPECT_EQ(causal_work(row), (Ints{132, 132, 132, 132}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
}

TEST(SpecExample6, MagiTwoDocumentsOf8And24) {
  const Ints docs{8, 24};
  const RowPlan row = plan_row(make_spec("magi", 4), sum(docs), &docs);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 10, 26, 42, 58, 74, 90}));
  EXPECT_EQ(row.map.table, (Ints{0, 7, 2, 6, 1, 5, 3, 4}));  // rank-major, two chunks each
  Ints loads;
  for (std::size_t r = 0; r < 4; ++r)
    loads.push_back(row.map_costs[row.map.table[2 * r]] + row.map_costs[row.map.table[2 * r + 1]]);
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_EQ(causal_work(row), loads);
}

// Example 7: the target of every local token, in local order, tokens t_k labelled k.
std::vector<Ints> local_targets(const Batch& batch) {
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  const Tensor logits(DType::f32, {1, 16, 16});
  Tensor valid(DType::b8, {1, 16});
  for (std::int64_t i = 0; i < 16; ++i) valid.set(i, 1);
  const auto loss = reference::shifted_loss_caller(plan, logits, batch.at(keys::labels), valid);
  std::vector<Ints> targets(2);
  for (std::int64_t r = 0; r < 2; ++r) targets[r] = local_values(plan.rows[0], loss.target[0], r);
  return targets;
}

TEST(SpecExample7, ShiftedTargetsCrossRanks) {
  const auto targets = local_targets(bshd_batch(1, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_NE(targets[0][3], 12) << "a local shift after the split";
}

TEST(SpecExample7, DocumentBoundaryEndsTheShift) {
  const auto targets = local_targets(packed_batch({{8, 8}}, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, -1, 9, 10, 11, 12}));
}

TEST(SpecExample8, LossIsNormalisedByTheGlobalCount) {
  // head-tail C=2, L=16: rank 0 holds 0-3 and 12-15, rank 1 holds 4-11. With slot 14 invalid and
  // slot 15 without a target, rank 0 has 6 contributing tokens and rank 1 has 8.
  const Batch batch = bshd_batch(1, 16);
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  Tensor labels(DType::i64, {1, 16}), valid(DType::b8, {1, 16}), logits(DType::f32, {1, 16, 2});
  for (std::int64_t g = 0; g < 16; ++g) {
    labels.set(g, 1);
    valid.set(g, g == 14 ? 0 : 1);
    // CE([a, 0], 1) = log(1 + e^a): choose a for CE 1.0 on rank 0's tokens and 2.0 on rank 1's.
    const double ce = (g >= 4 && g < 12) ? 2.0 : 1.0;
    logits.set(g * 2, std::log(std::exp(ce) - 1.0));
  }
  const auto loss = reference::shifted_loss(plan, logits, labels, valid);
  EXPECT_EQ(loss.contributing_total, 14);
  EXPECT_EQ(loss.rank_contributing, (Ints{6, 8}));
  EXPECT_NEAR(loss.global_mean, 22.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.global_mean, 1.5714286, 1e-6);
  EXPECT_NEAR(loss.rank_loss[0], 6.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.rank_loss[1], 16.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR((loss.rank_loss[0] + loss.rank_loss[1]) / 2.0, 22.0 / 14.0, 1e-6);
  // Each rank's own mean (its CE sum over its own count) is the classic bug: 1.0 and 2.0, mean 1.5.
  double mean_of_local_means = 0.0;
  for (std::int64_t r = 0; r < 2; ++r) {
    const double rank_sum = loss.rank_loss[r] * 14.0 / 2.0;
    mean_of_local_means += rank_sum / static_cast<double>(loss.rank_contributing[r]) / 2.0;
  }
  EXPECT_NEAR(mean_of_local_means, 1.5, 1e-6);
  EXPECT_GT(std::abs(loss.global_mean - mean_of_local_means), 0.05);
}

}  // namespace
}  // namespace cplab::testing
