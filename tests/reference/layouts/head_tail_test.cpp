// head-tail (SPEC §3.3): the worked examples of §9.1 (and §9.7, §9.8: the shifted loss) by the
// reference and by `cplab layout`, its row facts and its load balance.
#include <algorithm>
#include <cmath>

#include "reference/loss.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

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

using I32s = std::vector<std::int32_t>;
using U8s = std::vector<std::uint8_t>;

TEST(RowFacts, BshdRowPaddedAtItsEnd) {
  const RowPlan row = plan_row(make_spec("head-tail", 2), 7);
  EXPECT_EQ(row.padded_len, 8);
  EXPECT_EQ(row.original_len, 7);
  EXPECT_FALSE(row.packed);
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, 5, 6, -1}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(row.real, (U8s{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(row.valid_tokens, (Ints{3, 4}));  // rank 0 holds slots 0, 1, 6 and the pad 7
}

TEST(LoadBalance, HeadTailEqualOnACausalRow) {
  for (std::int64_t cp : {1, 2, 3, 4, 5, 8}) {
    const Ints work = causal_work(plan_row(make_spec("head-tail", cp), 2 * cp * 5));
    EXPECT_TRUE(std::all_of(work.begin(), work.end(), [&](std::int64_t w) { return w == work[0]; }))
        << cp;
  }
}

// SPEC §9.7 and §9.8: the worked examples of the shifted loss, with exactly the numbers given
// there. Example 7: the target of every local token, in local order, tokens t_k labelled k.
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

// SPEC §9.1 through `cplab layout`.
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

}  // namespace
}  // namespace cplab::testing
