// How the shard and gathered checks name the token a wrong slot holds (check/token_values.hpp):
// by its values, a NaN the same token as a NaN, a repeated value resolved by the run it continues.
#include "check/token_values.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cplab::check {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One row of one-element tokens with these values.
Tensor row_of(const std::vector<double>& values) {
  Tensor t(DType::f32, {1, static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) t.set(static_cast<std::int64_t>(i), values[i]);
  return t;
}

TEST(TokenValues, ATokenIsAllItsElementsOuterPlanesFirst) {
  // mRoPE-like [3, B=1, S=2]: token 1 is the three planes' second elements.
  Tensor t(DType::i64, {3, 1, 2});
  for (std::int64_t i = 0; i < 6; ++i) t.set(i, static_cast<double>(10 * i));
  const TokenAxes axes = token_axes(t, 2, "test");
  EXPECT_EQ(token_at(t, axes, 0, 1), (std::vector<double>{10, 30, 50}));
}

TEST(TokenValues, NaNIsTheSameTokenAsNaNAndNothingElse) {
  EXPECT_TRUE(same_token({1.0, kNaN}, {1.0, kNaN}));
  EXPECT_FALSE(same_token({1.0, kNaN}, {1.0, 0.0}));
  EXPECT_FALSE(same_token({0.0, 2.0}, {kNaN, 2.0}));
  EXPECT_FALSE(same_token({1.0}, {1.0, 1.0}));
  EXPECT_TRUE(same_token({-0.0}, {0.0}));
}

TEST(TokenValues, FindsAValueAndResolvesARepeatByTheRunItContinues) {
  const Tensor global = row_of({7, 5, 5, 9, 5});
  const ValueIndex index(global, token_axes(global, 1, "test"), 0);
  EXPECT_EQ(index.locate({7}, -1), 0);
  EXPECT_EQ(index.locate({9}, 4), 3);  // one slot holds it: the run does not matter
  EXPECT_EQ(index.locate({4}, -1), -1);
  EXPECT_EQ(index.locate({5}, -1), -2);  // three slots hold 5, no run to follow
  EXPECT_EQ(index.locate({5}, 0), 1);    // continues a run ending at slot 0
  EXPECT_EQ(index.locate({5}, 3), 4);    // 3 + 1 first
  EXPECT_EQ(index.locate({5}, 2), 1);    // 2 + 1 is 9; 2 − 1 is 5 (a run going down)
  EXPECT_EQ(index.locate({5}, 7), -2);   // neither neighbour holds it
}

// A NaN among the values must not make two different tokens one (doubles ordered with < are
// not a total order once a NaN is among them), and -0 is the same value as 0.
TEST(TokenValues, ANaNElementKeepsTokensApart) {
  Tensor global(DType::f32, {1, 3, 2});
  const std::vector<double> values = {6, kNaN, 6, 7, -0.0, 1};
  for (std::size_t i = 0; i < values.size(); ++i)
    global.set(static_cast<std::int64_t>(i), values[i]);
  const ValueIndex index(global, token_axes(global, 1, "test"), 0);
  EXPECT_EQ(index.locate({6, kNaN}, -1), 0);
  EXPECT_EQ(index.locate({6, 7}, -1), 1);
  EXPECT_EQ(index.locate({0.0, 1}, -1), 2);
  EXPECT_EQ(index.locate({6, 8}, -1), -1);
}

}  // namespace
}  // namespace cplab::check
