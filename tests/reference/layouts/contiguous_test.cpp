// contiguous (SPEC §3.2): the worked example of §9.2 by the reference, its shard and through
// `cplab layout`; its row facts, its pad multiple, its load and its refusals.
#include "layouts/contiguous.hpp"

#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

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

using reference::causal_work;
using reference::plan_row;
using U8s = std::vector<std::uint8_t>;
using I32s = std::vector<std::int32_t>;

TEST(RowFacts, PackedRowKeepsCallerOffsetsUnderContiguous) {
  // Documents of 5 and 3 tokens occupying 6 and 4 slots, 3 slots of caller row padding, 3 added.
  const Ints docs{5, 3}, padded{6, 4};
  const RowPlan row = plan_row(make_spec("contiguous", 2), 13, &docs, &padded);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.original_len, -1);
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(row.real, (U8s{1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -1, -1}));
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 6, 10}));
  EXPECT_EQ(row.valid_tokens, (Ints{7, 1}));  // slots 0-7 hold 7 real tokens, 8-15 one
}

TEST(RowFacts, ContiguousPadMultipleOne) {
  LayoutSpec spec = make_spec("contiguous", 3);
  layouts::contiguous_pad_multiple.set(spec, 1);
  EXPECT_EQ(plan_row(spec, 7).padded_len, 9);
  layouts::contiguous_pad_multiple.set(spec, 2);
  EXPECT_EQ(plan_row(spec, 7).padded_len, 12);
}

TEST(LoadBalance, ContiguousCausalImbalanceAtCp2) {
  EXPECT_DOUBLE_EQ(reference::imbalance(causal_work(plan_row(make_spec("contiguous", 2), 8))),
                   26.0 / 18.0);
}

TEST(SpecErrors, ContiguousPadMultipleNamesTheBadValue) {
  LayoutSpec spec = make_spec("contiguous", 2);
  layouts::contiguous_pad_multiple.set(spec, 0);
  EXPECT_ERROR(validate_spec(spec), "pad_multiple=0");
}

TEST(PlanErrors, ContiguousPinnedLengthThatCannotWork) {
  EXPECT_ERROR(plan_row(make_spec("contiguous", 2), 6, nullptr, nullptr, 12), "L=8", "L=12");
}

// SPEC §9.2 through `cplab layout`.
TEST(CliLayout, Example2Contiguous) {
  const auto out = layout_json("--layout contiguous --cp 2 --seq-len 6 --pad-multiple 2");
  EXPECT_EQ(out["padded_seq_len"], 8);
  EXPECT_EQ(out["original_seq_len"], 6);
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(out["ranks"][1]["positions"], (Ints{4, 5, 6, 7}));
  EXPECT_EQ(out["ranks"][1]["valid_tokens"], 2);
}

}  // namespace
}  // namespace cplab::testing
