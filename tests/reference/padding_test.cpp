// SPEC §2 pad values for every kind of key, under both pad policies, at the row's end: two BSHD
// rows of S=6 at C=2 under a plain layout, padded to its L. Padding inside documents is a layout's
// own (tests/reference/layouts/ID_test.cpp).
#include "reference/verbs.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::pad_to_global;

constexpr std::int64_t kSeq = 6;  // S: the caller's row length

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
    spec_ = make_spec(testsupport::a_plain_layout(), 2);
    spec_.pad_token_id = 7;
    batch_ = bshd_batch(2, kSeq);
  }
  void SetUp() override {
    len_ = plan().rows[0].padded_len;
    ASSERT_GT(len_, kSeq) << spec_brief(spec_) << " pads no slot to an S=6 row: no pad to check";
  }
  ShardPlan plan() const { return reference::plan(spec_, batch_); }
  Tensor padded(const std::string& name) const {
    return pad_to_global(plan(), batch_.tokens.at(name));
  }
  // A padded row: value(s) at the caller's slots s < S, then `pad` up to L.
  template <typename Value>
  std::vector<double> row(Value value, double pad) const {
    std::vector<double> out;
    for (std::int64_t s = 0; s < len_; ++s)
      out.push_back(s < kSeq ? static_cast<double>(value(s)) : pad);
    return out;
  }
  // A row of slots whose values continue past S: value(s) at every slot.
  template <typename Value>
  std::vector<double> continued(Value value) const {
    std::vector<double> out;
    for (std::int64_t s = 0; s < len_; ++s) out.push_back(static_cast<double>(value(s)));
    return out;
  }

  LayoutSpec spec_;
  Batch batch_;
  std::int64_t len_ = 0;  // L
};

TEST_F(PadValues, WellKnownKeys) {
  Tensor valid(DType::b8, {2, kSeq}), padding(DType::b8, {2, kSeq});
  for (std::int64_t i = 0; i < 2 * kSeq; ++i) valid.set(i, 1);
  batch_.add(keys::valid, valid);
  batch_.add(keys::padding_mask, padding);
  batch_.add(keys::position_ids, located(DType::i64, 2, kSeq));
  const auto id = [](std::int64_t s) { return 1000 + s; };
  const auto caller = [](std::int64_t s) { return s; };
  const auto one = [](std::int64_t) { return 1; };
  const auto zero = [](std::int64_t) { return 0; };
  EXPECT_EQ(row_of(padded(keys::input_ids), 1), row(id, 7));
  EXPECT_EQ(row_of(padded(keys::labels), 0), row(caller, -100));
  EXPECT_EQ(row_of(padded(keys::position_ids), 1), continued(id));
  EXPECT_EQ(row_of(padded(keys::loss_mask), 0), row(one, 0));
  EXPECT_EQ(row_of(padded(keys::valid), 0), row(one, 0));
  EXPECT_EQ(row_of(padded(keys::padding_mask), 1), row(zero, 1));
  EXPECT_EQ(padded(keys::valid).dtype(), DType::b8);
}

TEST_F(PadValues, InputsEmbedsPadWithZeroVectors) {
  Batch batch;
  batch.add(keys::inputs_embeds, located(DType::f32, 2, kSeq, 3));
  const Tensor global =
      pad_to_global(reference::plan(spec_, batch), batch.tokens.at(keys::inputs_embeds));
  ASSERT_EQ(global.shape(), (Shape{2, len_, 3}));
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t s = 0; s < len_; ++s) {
      for (std::int64_t e = 0; e < 3; ++e) {
        EXPECT_EQ(global.get((b * len_ + s) * 3 + e), s < kSeq ? token_value(b, s, e) : 0.0)
            << "b=" << b << " s=" << s << " e=" << e;
      }
    }
  }
}

TEST_F(PadValues, ExtraKeysUseTheirDeclaredValue) {
  batch_.tokens["teacher_logprobs"] =
      TokenField{.value = located(DType::f32, 2, kSeq, 2), .pad_value = 5.5};
  batch_.add("token_type_ids", located(DType::i32, 2, kSeq));
  const Tensor declared = padded("teacher_logprobs");
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t s = 0; s < len_; ++s) {
      for (std::int64_t e = 0; e < 2; ++e) {
        EXPECT_EQ(declared.get((b * len_ + s) * 2 + e), s < kSeq ? token_value(b, s, e) : 5.5)
            << "b=" << b << " s=" << s << " e=" << e;
      }
    }
  }
  EXPECT_EQ(row_of(padded("token_type_ids"), 0), row([](std::int64_t s) { return s; }, 0));
}

TEST_F(PadValues, MropePositionsContinuePerPlane) {
  Tensor mrope(DType::i64, {3, 2, kSeq});
  for (std::int64_t p = 0; p < 3; ++p) {
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t s = 0; s < kSeq; ++s)
        mrope.set((p * 2 + b) * kSeq + s, static_cast<double>(100 * p + 10 * b + s));
    }
  }
  batch_.add(keys::position_ids, mrope);
  ASSERT_EQ(batch_.tokens.at(keys::position_ids).seq_dim, 2);
  const Tensor global = padded(keys::position_ids);
  ASSERT_EQ(global.shape(), (Shape{3, 2, len_}));
  for (std::int64_t p = 0; p < 3; ++p) {
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t s = 0; s < len_; ++s) {
        EXPECT_EQ(global.get((p * 2 + b) * len_ + s), static_cast<double>(100 * p + 10 * b + s))
            << "plane " << p << " b=" << b << " s=" << s;
      }
    }
  }
  // Sharded, each rank holds [3, B, ℓ].
  const auto sharded = reference::shard_batch(plan(), batch_);
  EXPECT_EQ(sharded[0][1].at(keys::position_ids).shape(), (Shape{3, 2, len_ / 2}));
}

TEST_F(PadValues, SharedPositionRowIsBroadcast) {
  Tensor shared(DType::i64, {1, kSeq});
  for (std::int64_t s = 0; s < kSeq; ++s) shared.set(s, static_cast<double>(2 * s));
  batch_.add(keys::position_ids, shared);
  const Tensor global = padded(keys::position_ids);
  ASSERT_EQ(global.shape(), (Shape{2, len_}));
  // 0, 2, ..., 10, then one more per added slot: 11, 12, ...
  EXPECT_EQ(row_of(global, 1), continued([](std::int64_t s) {
              return s < kSeq ? 2 * s : 2 * (kSeq - 1) + (s - kSeq + 1);
            }));
  EXPECT_EQ(row_of(global, 0), row_of(global, 1));
}

TEST_F(PadValues, AddedPositionsAndZeroPolicy) {
  auto local_positions = [&](std::int64_t rank) {
    return reference::shard_batch(plan(), batch_)[0][rank]
        .at(keys::position_ids)
        .to_vector<std::int64_t>();
  };
  // Each rank's slots of both rows, in its local order: a slot's position is the slot (added slots
  // continue the row), or 0 on an added slot under the zero policy.
  const ShardPlan planned = plan();
  auto expected = [&](std::int64_t rank, bool zero) {
    Ints out;
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t g : planned.rows[b].index[rank]) out.push_back(zero && g >= kSeq ? 0 : g);
    }
    return out;
  };
  for (std::int64_t r = 0; r < 2; ++r) EXPECT_EQ(local_positions(r), expected(r, false)) << r;
  spec_.pad_policy = PadPolicy::zero;
  for (std::int64_t r = 0; r < 2; ++r) EXPECT_EQ(local_positions(r), expected(r, true)) << r;
  const auto caller = [](std::int64_t s) { return s; };
  EXPECT_EQ(row_of(padded(keys::input_ids), 0), row(caller, 0));
  EXPECT_EQ(row_of(padded(keys::labels), 0), row(caller, -100));
  EXPECT_EQ(row_of(padded(keys::loss_mask), 0), row([](std::int64_t) { return 1; }, 0));
  batch_.add(keys::position_ids, located(DType::i64, 2, kSeq));
  EXPECT_EQ(row_of(padded(keys::position_ids), 1), row([](std::int64_t s) { return 1000 + s; }, 0));
}

}  // namespace
}  // namespace cplab::testing
