// The copy kernel's planning: piece width from alignment, threads per token, grid size, fill
// pattern, and the fused loss's vector width.
#include "gpu/host/copy_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "core/error.hpp"

namespace cplab::gpu {
namespace {

TEST(CopyPlan, width_is_the_widest_piece_that_divides_the_token_and_both_alignments) {
  EXPECT_EQ(copy_width(0, 0, 16), 16);
  EXPECT_EQ(copy_width(256, 512, 4096), 16);
  EXPECT_EQ(copy_width(0, 0, 24), 8);  // 24 bytes: not a multiple of 16
  EXPECT_EQ(copy_width(8, 0, 32), 8);  // source only 8-aligned
  EXPECT_EQ(copy_width(0, 4, 32), 4);  // destination only 4-aligned
  EXPECT_EQ(copy_width(2, 0, 6), 2);
  EXPECT_EQ(copy_width(0, 0, 3), 1);
  EXPECT_EQ(copy_width(1, 0, 16), 1);
}

TEST(CopyPlan, small_tokens_share_a_block_and_large_ones_loop) {
  const CopyPlan id = plan_copy(0, 0, 8);  // one int64 id per token
  EXPECT_EQ(id.width, 8);
  EXPECT_EQ(id.chunks, 1);
  EXPECT_EQ(id.threads_per_token, 1);
  EXPECT_EQ(id.tokens_per_block, kCopyBlockThreads);

  const CopyPlan hidden = plan_copy(0, 0, 16384);  // 8192 bf16
  EXPECT_EQ(hidden.width, 16);
  EXPECT_EQ(hidden.chunks, 1024);
  EXPECT_EQ(hidden.threads_per_token, kCopyBlockThreads);
  EXPECT_EQ(hidden.tokens_per_block, 1);

  const CopyPlan three = plan_copy(0, 0, 48);  // three pieces: four threads, one idle
  EXPECT_EQ(three.chunks, 3);
  EXPECT_EQ(three.threads_per_token, 4);
  EXPECT_EQ(three.tokens_per_block, kCopyBlockThreads / 4);
}

TEST(CopyPlan, empty_tokens_are_refused_with_their_size) {
  try {
    plan_copy(0, 0, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("got 0"), std::string::npos) << e.what();
  }
}

TEST(CopyPlan, grid_covers_the_items_up_to_the_cap) {
  EXPECT_EQ(grid_blocks(0, 256, 100), 1);
  EXPECT_EQ(grid_blocks(1000, 256, 100), 4);
  EXPECT_EQ(grid_blocks(1024, 256, 100), 4);
  EXPECT_EQ(grid_blocks(1025, 256, 100), 5);
  EXPECT_EQ(grid_blocks(std::int64_t{1} << 40, 1, 32768), 32768);
  EXPECT_THROW(grid_blocks(10, 0, 1), Error);
}

TEST(CopyPlan, fill_pattern_repeats_the_element_over_sixteen_bytes) {
  const std::int64_t id = 0x0102030405060708;
  const auto p8 = fill_pattern(&id, 8);
  std::int64_t halves[2];
  std::memcpy(halves, p8.data(), 16);
  EXPECT_EQ(halves[0], id);
  EXPECT_EQ(halves[1], id);
  const std::uint16_t bf = 0x3f80;  // bf16 1.0
  const auto p2 = fill_pattern(&bf, 2);
  for (int i = 0; i < 8; ++i) {
    std::uint16_t got;
    std::memcpy(&got, p2.data() + 2 * i, 2);
    EXPECT_EQ(got, bf) << i;
  }
  EXPECT_THROW(fill_pattern(&id, 3), Error);
}

TEST(CopyPlan, loss_vectorises_only_whole_aligned_rows) {
  EXPECT_EQ(loss_vector_elems(0, 0, 4096, 4), 4);
  EXPECT_EQ(loss_vector_elems(0, 0, 4097, 4), 1);
  EXPECT_EQ(loss_vector_elems(0, 0, 4096, 2), 8);
  EXPECT_EQ(loss_vector_elems(0, 0, 4100, 2), 1);  // a multiple of 4, not of 8
  EXPECT_EQ(loss_vector_elems(0, 8, 4096, 4), 1);  // gradient rows only 8-aligned
  EXPECT_THROW(loss_vector_elems(0, 0, 16, 8), Error);
}

}  // namespace
}  // namespace cplab::gpu
