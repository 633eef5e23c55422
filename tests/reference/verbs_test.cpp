// The sharder's verbs (SPEC §4-§5): microbatches, shard_primary = false, token tensors sharded
// exactly like the batch, gather∘shard = identity, and the gather's backward.
#include "reference/verbs.hpp"

#include "support.hpp"
#include "tests/support/layouts.hpp"
#include "verbs_support.hpp"

namespace cplab::testing {
namespace {

using reference::microbatch_plan;
using reference::shard_batch;
using reference::shard_token_tensor;

// The verbs' machinery, whatever the layout: a plain one where one layout is enough, its L from
// its plan; each layout's own verbs are in tests/reference/layouts/ID_test.cpp.
TEST(Microbatches, EachIsShardedAlike) {
  LayoutSpec spec = make_spec(testsupport::a_plain_layout(), 3);
  spec.microbatches = 2;
  spec.pad_token_id = -1;
  const Batch batch = bshd_batch(4, 10);
  const ShardPlan plan = reference::plan(spec, batch);
  const std::int64_t local = plan.rows[0].padded_len / 3;
  ASSERT_GT(plan.rows[0].padded_len, 10) << "no padding to check";
  const auto sharded = shard_batch(plan, batch);
  ASSERT_EQ(sharded.size(), 2u);
  for (std::int64_t m = 0; m < 2; ++m) {
    ASSERT_EQ(sharded[m].size(), 3u);
    for (std::int64_t r = 0; r < 3; ++r) {
      const Tensor ids = sharded[m][r].at(keys::input_ids);
      ASSERT_EQ(ids.shape(), (Shape{2, local}));
      for (std::int64_t b = 0; b < 2; ++b) {
        for (std::int64_t k = 0; k < local; ++k) {
          EXPECT_EQ(ids.get(b * local + k),
                    expected_local(plan.rows[m * 2 + b], m * 2 + b, r, k, -1.0))
              << "m=" << m << " r=" << r << " b=" << b << " k=" << k;
        }
      }
    }
  }
}

TEST(ShardPrimary, LaterShardingGivesWhatShardingNowGives) {
  for (const auto& [layout, cp] : testsupport::layouts_at({3})) {
    if (!testsupport::takes_rows(layout, true)) continue;
    SCOPED_TRACE(layout);
    LayoutSpec spec = make_spec(layout, 3);
    spec.microbatches = 2;
    spec.pad_token_id = 5;
    // Two rows of one length, each the row nearest to its documents that the layout takes (as the
    // caller pads them for it, or fitted to the lengths it takes), the shorter one's padding given
    // to its last document.
    sim::RowShape first = sim::nearest_accepted(spec, sim::packed_row({6, 3}, 11));
    sim::RowShape second = sim::nearest_accepted(spec, sim::packed_row({4, 1, 2}, 11));
    const std::int64_t seq = std::max(first.seq_len, second.seq_len);
    first = sim::nearest_accepted(spec, sim::packed_row(first.documents, seq));
    second = sim::nearest_accepted(spec, sim::packed_row(second.documents, seq));
    ASSERT_EQ(first.seq_len, second.seq_len);
    const Batch batch = packed_batch({{5, 3}, {4, 1, 2}}, seq, {first.documents, second.documents});
    const auto now = shard_batch(reference::plan(spec, batch), batch);
    spec.shard_primary = false;
    const ShardPlan plan = reference::plan(spec, batch);
    const auto later = shard_batch(plan, batch);
    for (std::int64_t m = 0; m < 2; ++m) {
      const ShardPlan part = microbatch_plan(plan, m);
      for (std::int64_t r = 0; r < 3; ++r) {
        const Tensor& kept = later[m][r].at(keys::input_ids);
        ASSERT_EQ(kept.shape(), (Shape{1, batch.seq_len()}))
            << "the primary stays global, in caller coordinates";
        EXPECT_EQ(kept.get(3), token_value(m, 3));
        EXPECT_EQ(shard_token_tensor(part, kept, 1, 5.0, r), now[m][r].at(keys::input_ids));
        EXPECT_EQ(later[m][r].at(keys::labels), now[m][r].at(keys::labels));
      }
    }
  }
}

TEST(ShardTokenTensor, ShardsExactlyLikeTheBatch) {
  for (const auto& [layout, cp] : testsupport::layouts_at({2})) {
    if (!testsupport::takes_rows(layout, false)) continue;
    SCOPED_TRACE(layout);
    const Batch batch = bshd_batch(2, sim::nearest_accepted_len(make_spec(layout, 2), 13));
    const ShardPlan plan = reference::plan(make_spec(layout, 2), batch);
    const auto sharded = shard_batch(plan, batch);
    const Tensor& labels = batch.at(keys::labels);
    const Tensor global = reference::pad_to_global(plan, batch.tokens.at(keys::labels));
    for (std::int64_t r = 0; r < 2; ++r) {
      EXPECT_EQ(shard_token_tensor(plan, labels, 1, -100.0, r), sharded[0][r].at(keys::labels));
      EXPECT_EQ(shard_token_tensor(plan, global, 1, std::nullopt, r),
                sharded[0][r].at(keys::labels));
    }
  }
}

TEST(ShardTokenTensor, AnyDtypeTrailingDimsAndSeqDim) {
  const Batch batch = bshd_batch(2, 6);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const std::int64_t local_len = plan.rows[0].padded_len / 2;
  // Small integers: exact in every dtype, u8 included.
  auto small = [](std::int64_t b, std::int64_t s, std::int64_t e) {
    return static_cast<double>(10 * b + s + e);
  };
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::i32, DType::u8, DType::i64}) {
    Tensor value(dtype, {2, 6, 5});
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t s = 0; s < 6; ++s) {
        for (std::int64_t e = 0; e < 5; ++e) value.set((b * 6 + s) * 5 + e, small(b, s, e));
      }
    }
    const Tensor local = shard_token_tensor(plan, value, 1, 3.0, 1);
    ASSERT_EQ(local.shape(), (Shape{2, local_len, 5}));
    ASSERT_EQ(local.dtype(), dtype);
    for (std::int64_t k = 0; k < local_len; ++k) {
      const std::int64_t caller = plan.rows[1].caller_pos[plan.rows[1].index[1][k]];
      for (std::int64_t e = 0; e < 5; ++e) {
        EXPECT_EQ(local.get((1 * local_len + k) * 5 + e), caller >= 0 ? small(1, caller, e) : 3.0)
            << dtype_name(dtype) << " k=" << k << " e=" << e;
      }
    }
  }
  Tensor planes(DType::i64, {3, 2, 6});  // seq on dim 2
  for (std::int64_t i = 0; i < planes.numel(); ++i) planes.set(i, static_cast<double>(i));
  bool padding_seen = false;
  for (std::int64_t r = 0; r < 2; ++r) {
    const Tensor local = shard_token_tensor(plan, planes, 2, -1.0, r);
    ASSERT_EQ(local.shape(), (Shape{3, 2, local_len}));
    for (std::int64_t p = 0; p < 3; ++p) {
      for (std::int64_t b = 0; b < 2; ++b) {
        for (std::int64_t k = 0; k < local_len; ++k) {
          const std::int64_t caller = plan.rows[b].caller_pos[plan.rows[b].index[r][k]];
          padding_seen = padding_seen || caller < 0;
          EXPECT_EQ(local.get((p * 2 + b) * local_len + k),
                    caller >= 0 ? static_cast<double>((p * 2 + b) * 6 + caller) : -1.0)
              << "r=" << r << " plane " << p << " b=" << b << " k=" << k;
        }
      }
    }
  }
  EXPECT_TRUE(padding_seen) << "L=" << plan.rows[0].padded_len << " pads no slot of S=6";
}

TEST(ShardTokenTensor, RefusesOtherLengths) {
  const Batch batch = bshd_batch(2, 6);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const std::int64_t len = plan.rows[0].padded_len;
  ASSERT_NE(len, 7);
  const std::string padded = "L=" + std::to_string(len);
  EXPECT_ERROR(shard_token_tensor(plan, located(DType::f32, 2, 7), 1, 0.0, 0), "7 tokens",
               padded.c_str(), "S=6");
  EXPECT_ERROR(shard_token_tensor(plan, located(DType::f32, 2, 6), 1, std::nullopt, 0), "S=6",
               padded.c_str(), "explicit fill");
  EXPECT_ERROR(shard_token_tensor(plan, located(DType::f32, 3, len), 1, std::nullopt, 0), "3 rows",
               "B=2");
  EXPECT_ERROR(shard_token_tensor(plan, located(DType::f32, 2, len), 1, std::nullopt, 2), "rank 2",
               "cp=2");
}

}  // namespace
}  // namespace cplab::testing
