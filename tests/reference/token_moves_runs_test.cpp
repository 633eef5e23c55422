// take_tokens and put_tokens on large tokens (moved as runs of consecutive slots) put every
// element where an element-by-element copy would: maps with runs, breaks, holes (-1) and
// reversed stretches, for token sizes below and above the run threshold.
#include <gtest/gtest.h>

#include <random>

#include "core/token_moves.hpp"

namespace cplab {
namespace {

// A map of `len` sources into a row of `src_len`: runs of random length at random starts, some
// reversed, some holes.
std::vector<std::int64_t> runs_map(std::int64_t len, std::int64_t src_len, std::mt19937& rng) {
  std::vector<std::int64_t> map;
  while (static_cast<std::int64_t>(map.size()) < len) {
    const std::int64_t run = 1 + static_cast<std::int64_t>(rng() % 9);
    const std::int64_t start = static_cast<std::int64_t>(rng() % static_cast<unsigned>(src_len));
    const int kind = static_cast<int>(rng() % 4);
    for (std::int64_t i = 0; i < run && static_cast<std::int64_t>(map.size()) < len; ++i) {
      if (kind == 0)
        map.push_back(-1);
      else if (kind == 1)
        map.push_back((start + run - 1 - i) % src_len);
      else
        map.push_back((start + i) % src_len);
    }
  }
  return map;
}

TEST(TokenMovesRuns, take_and_put_match_an_element_by_element_copy) {
  std::mt19937 rng(9);
  for (std::int64_t hidden : {1, 3, 16, 17, 64}) {  // f32: 4 to 256 bytes per token
    const std::int64_t src_len = 50, len = 40;
    Tensor src(DType::f32, {1, src_len, hidden});
    auto values = src.data<float>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
    const std::vector<std::int64_t> map = runs_map(len, src_len, rng);
    const Tensor taken = take_tokens(src, 1, {map}, len);
    for (std::int64_t k = 0; k < len; ++k) {
      for (std::int64_t e = 0; e < hidden; ++e) {
        const float want = map[k] < 0 ? 0.0f : values[map[k] * hidden + e];
        ASSERT_EQ(taken.data<float>()[k * hidden + e], want) << "H=" << hidden << " k=" << k;
      }
    }
    // put back: distinct destinations, a permutation of the first len slots with runs.
    std::vector<std::int64_t> to(static_cast<std::size_t>(len));
    for (std::int64_t k = 0; k < len; ++k) to[k] = (k + 7) % len;
    Tensor out(DType::f32, {1, len, hidden});
    put_tokens(taken, 1, {to}, out);
    for (std::int64_t k = 0; k < len; ++k) {
      for (std::int64_t e = 0; e < hidden; ++e) {
        ASSERT_EQ(out.data<float>()[to[k] * hidden + e], taken.data<float>()[k * hidden + e])
            << "H=" << hidden << " k=" << k;
      }
    }
  }
}

// put_tokens into a longer row already holding values: slots no token goes to keep theirs, and
// of two tokens sent to one slot the later lands (as a copy in source order would leave it),
// whether the tokens move in source order or in slot order.
TEST(TokenMovesRuns, put_keeps_unsent_slots_and_the_later_of_two_tokens_for_one_slot) {
  for (std::int64_t hidden : {1, 16, 64}) {
    for (std::int64_t out_len : {45, 100}) {  // mostly filled (slot order), sparse (source order)
      const std::int64_t len = 40;
      Tensor in(DType::f32, {1, len, hidden});
      auto values = in.data<float>();
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
      std::vector<std::int64_t> to(static_cast<std::size_t>(len));
      for (std::int64_t k = 0; k < len; ++k) to[k] = (3 * k + 2) % out_len;
      to[10] = to[30];  // token 30 overwrites token 10's slot
      Tensor out(DType::f32, {1, out_len, hidden});
      for (float& x : out.data<float>()) x = -1.0f;
      put_tokens(in, 1, {to}, out);
      std::vector<std::int64_t> last(static_cast<std::size_t>(out_len), -1);
      for (std::int64_t k = 0; k < len; ++k) last[to[k]] = k;
      for (std::int64_t t = 0; t < out_len; ++t) {
        for (std::int64_t e = 0; e < hidden; ++e) {
          const float want = last[t] < 0 ? -1.0f : values[last[t] * hidden + e];
          ASSERT_EQ(out.data<float>()[t * hidden + e], want)
              << "H=" << hidden << " L=" << out_len << " slot " << t;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cplab
