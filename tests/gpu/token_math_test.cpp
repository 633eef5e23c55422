// Per-token arithmetic of the copy kernels, run on the host: blocked token offsets (the
// all-gather's layout) and fill bytes of any piece. The partition's binary search of a re-laid row
// (thd's) is tested in thd's own file (layouts/thd_test.cpp).
#include "gpu/host/token_math.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "gpu/host/copy_plan.hpp"
#include "reference/plan.hpp"

namespace cplab::gpu {
namespace {

TEST(TokenOffset, plain_layout_is_row_major) {
  for (std::int64_t o = 0; o < 3; ++o) {
    for (std::int64_t t = 0; t < 5; ++t) EXPECT_EQ(token_offset(o, t, 5, 0, 3), o * 5 + t);
  }
}

TEST(TokenOffset, blocked_layout_is_the_concatenation_of_rank_shards) {
  // C = 3 ranks each holding [outer = 2][ℓ = 4] tokens, all-gathered: rank r's token (o, k) sits at
  // r·(2·4) + o·4 + k; token_offset sees it as token t = r·4 + k of outer slice o.
  const std::int64_t cp = 3, outer = 2, local = 4;
  std::set<std::int64_t> seen;
  for (std::int64_t r = 0; r < cp; ++r) {
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t k = 0; k < local; ++k) {
        const std::int64_t at = token_offset(o, r * local + k, cp * local, local, outer);
        EXPECT_EQ(at, r * outer * local + o * local + k);
        seen.insert(at);
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(cp * outer * local));
}

TEST(FillBits, every_aligned_piece_is_the_pattern_bytes_at_its_offset) {
  const std::uint8_t element[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  for (std::int64_t es : {1, 2, 4, 8}) {
    const auto pattern = fill_pattern(element, es);
    std::uint64_t first8;
    std::memcpy(&first8, pattern.data(), 8);
    for (std::int64_t width : {1, 2, 4, 8}) {
      for (std::int64_t at = 0; at < 64; at += width) {
        std::uint64_t expected = 0;
        std::memcpy(&expected, pattern.data() + at % 16, static_cast<std::size_t>(width));
        EXPECT_EQ(fill_bits(first8, at, width), expected)
            << "element " << es << " width " << width << " at " << at;
      }
    }
  }
}

}  // namespace
}  // namespace cplab::gpu
