// SPEC §2 pad values for every kind of key, under both pad policies, at the row's end (contiguous
// S=6 → L=8 at C=2) and inside documents (thd).
#include "reference/verbs.hpp"
#include "support.hpp"

namespace cplab::testing {
namespace {

using reference::pad_to_global;

std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
  return out;
}

// Row b of a [B, L] tensor.
std::vector<double> row_of(const Tensor& t, std::int64_t b) {
  const std::vector<double> all = values(t);
  const std::int64_t len = t.size(1);
  return {all.begin() + b * len, all.begin() + (b + 1) * len};
}

class PadValues : public ::testing::Test {
 protected:
  PadValues() {
    spec_ = make_spec("contiguous", 2);
    spec_.pad_token_id = 7;
    batch_ = bshd_batch(2, 6);
  }
  ShardPlan plan() const { return reference::plan(spec_, batch_); }
  Tensor padded(const std::string& name) const {
    return pad_to_global(plan(), batch_.tokens.at(name));
  }

  LayoutSpec spec_;
  Batch batch_;
};

TEST_F(PadValues, WellKnownKeys) {
  Tensor valid(DType::b8, {2, 6}), padding(DType::b8, {2, 6});
  for (std::int64_t i = 0; i < 12; ++i) valid.set(i, 1);
  batch_.add(keys::valid, valid);
  batch_.add(keys::padding_mask, padding);
  batch_.add(keys::position_ids, located(DType::i64, 2, 6));
  EXPECT_EQ(row_of(padded(keys::input_ids), 1),
            (std::vector<double>{1000, 1001, 1002, 1003, 1004, 1005, 7, 7}));
  EXPECT_EQ(row_of(padded(keys::labels), 0), (std::vector<double>{0, 1, 2, 3, 4, 5, -100, -100}));
  EXPECT_EQ(row_of(padded(keys::position_ids), 1),
            (std::vector<double>{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007}));
  EXPECT_EQ(row_of(padded(keys::loss_mask), 0), (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(row_of(padded(keys::valid), 0), (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(row_of(padded(keys::padding_mask), 1), (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(padded(keys::valid).dtype(), DType::b8);
}

TEST_F(PadValues, InputsEmbedsPadWithZeroVectors) {
  Batch batch;
  batch.add(keys::inputs_embeds, located(DType::f32, 2, 6, 3));
  const Tensor global =
      pad_to_global(reference::plan(spec_, batch), batch.tokens.at(keys::inputs_embeds));
  ASSERT_EQ(global.shape(), (Shape{2, 8, 3}));
  for (std::int64_t e = 0; e < 3; ++e) {
    EXPECT_EQ(global.get((1 * 8 + 5) * 3 + e), token_value(1, 5, e));
    EXPECT_EQ(global.get((1 * 8 + 6) * 3 + e), 0.0);
    EXPECT_EQ(global.get((0 * 8 + 7) * 3 + e), 0.0);
  }
}

TEST_F(PadValues, ExtraKeysUseTheirDeclaredValue) {
  batch_.tokens["teacher_logprobs"] =
      TokenField{.value = located(DType::f32, 2, 6, 2), .pad_value = 5.5};
  batch_.add("token_type_ids", located(DType::i32, 2, 6));
  const Tensor declared = padded("teacher_logprobs");
  EXPECT_EQ(declared.get((0 * 8 + 6) * 2 + 1), 5.5);
  EXPECT_EQ(declared.get((1 * 8 + 7) * 2 + 0), 5.5);
  EXPECT_EQ(declared.get((1 * 8 + 2) * 2 + 1), token_value(1, 2, 1));
  EXPECT_EQ(row_of(padded("token_type_ids"), 0), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0}));
}

TEST_F(PadValues, MropePositionsContinuePerPlane) {
  Tensor mrope(DType::i64, {3, 2, 6});
  for (std::int64_t p = 0; p < 3; ++p) {
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t s = 0; s < 6; ++s)
        mrope.set((p * 2 + b) * 6 + s, static_cast<double>(100 * p + 10 * b + s));
    }
  }
  batch_.add(keys::position_ids, mrope);
  ASSERT_EQ(batch_.tokens.at(keys::position_ids).seq_dim, 2);
  const Tensor global = padded(keys::position_ids);
  ASSERT_EQ(global.shape(), (Shape{3, 2, 8}));
  EXPECT_EQ(global.get((2 * 2 + 1) * 8 + 6), 216.0);
  EXPECT_EQ(global.get((2 * 2 + 1) * 8 + 7), 217.0);
  EXPECT_EQ(global.get((1 * 2 + 0) * 8 + 7), 107.0);
  // Sharded, each rank holds [3, B, ℓ].
  const auto sharded = reference::shard_batch(plan(), batch_);
  EXPECT_EQ(sharded[0][1].at(keys::position_ids).shape(), (Shape{3, 2, 4}));
}

TEST_F(PadValues, SharedPositionRowIsBroadcast) {
  Tensor shared(DType::i64, {1, 6});
  for (std::int64_t s = 0; s < 6; ++s) shared.set(s, static_cast<double>(2 * s));
  batch_.add(keys::position_ids, shared);
  const Tensor global = padded(keys::position_ids);
  ASSERT_EQ(global.shape(), (Shape{2, 8}));
  EXPECT_EQ(row_of(global, 1), (std::vector<double>{0, 2, 4, 6, 8, 10, 11, 12}));
  EXPECT_EQ(row_of(global, 0), row_of(global, 1));
}

TEST_F(PadValues, AddedPositionsAndZeroPolicy) {
  auto local_positions = [&](std::int64_t rank) {
    return reference::shard_batch(plan(), batch_)[0][rank]
        .at(keys::position_ids)
        .to_vector<std::int64_t>();
  };
  EXPECT_EQ(local_positions(1), (Ints{4, 5, 6, 7, 4, 5, 6, 7}));
  spec_.pad_policy = PadPolicy::zero;
  EXPECT_EQ(local_positions(1), (Ints{4, 5, 0, 0, 4, 5, 0, 0}));
  EXPECT_EQ(row_of(padded(keys::input_ids), 0), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0}));
  EXPECT_EQ(row_of(padded(keys::labels), 0), (std::vector<double>{0, 1, 2, 3, 4, 5, -100, -100}));
  EXPECT_EQ(row_of(padded(keys::loss_mask), 0), (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
  batch_.add(keys::position_ids, located(DType::i64, 2, 6));
  EXPECT_EQ(row_of(padded(keys::position_ids), 1),
            (std::vector<double>{1000, 1001, 1002, 1003, 1004, 1005, 0, 0}));
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
  auto global = [&](const char* key) { return values(pad_to_global(plan, batch.tokens.at(key))); };
  EXPECT_EQ(global(keys::input_ids), (std::vector<double>{0, 1, 2, 9, 3, 4, 9, 9}));
  EXPECT_EQ(global(keys::labels), (std::vector<double>{0, 1, 2, -100, 3, 4, -100, -100}));
  EXPECT_EQ(global(keys::position_ids), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(global(keys::loss_mask), (std::vector<double>{1, 1, 1, 0, 1, 1, 0, 0}));
}

}  // namespace
}  // namespace cplab::testing
