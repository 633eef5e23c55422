// take_tokens and put_tokens on large tokens (moved as runs of consecutive slots) put every
// element where an element-by-element copy would: maps with runs, breaks, holes (-1) and
// reversed stretches, for token sizes below and above the run threshold.
#include <gtest/gtest.h>

#include <random>

#include "reference/types/token_moves.hpp"

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

}  // namespace
}  // namespace cplab
