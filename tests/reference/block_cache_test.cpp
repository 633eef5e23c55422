// Large tensors' blocks are reused from the block cache (no fresh pages per tensor), and the
// cache stays within its bound.
#include "core/block_cache.hpp"

#include <gtest/gtest.h>

#include "core/tensor.hpp"

namespace cplab {
namespace {

std::size_t t_bytes(const Shape& shape) { return static_cast<std::size_t>(shape[0]) * 4; }

TEST(BlockCache, a_freed_large_tensor_block_serves_the_next_of_its_size) {
  const Shape shape = {(std::int64_t{1} << 20) + 3 * (std::int64_t{1} << 14)};  // a size of its own
  const std::size_t before = block_cache::cached_bytes();
  const void* first = nullptr;
  {
    Tensor t(DType::f32, shape, Uninitialized{});
    first = t.raw();
  }
  EXPECT_GE(block_cache::cached_bytes(), before + t_bytes(shape));  // kept, not returned
  Tensor again(DType::f32, shape, Uninitialized{});
  EXPECT_EQ(static_cast<const void*>(again.raw()), first);
  EXPECT_EQ(block_cache::cached_bytes(), before);  // handed out again
}

TEST(BlockCache, keeps_at_most_its_bound) {
  // Twelve freed blocks of distinct sizes, 1.5 GiB in all (never touched, so never resident).
  for (std::int64_t i = 0; i < 12; ++i)
    Tensor(DType::u8, {(std::int64_t{1} << 27) + i * (std::int64_t{1} << 16)}, Uninitialized{});
  EXPECT_LE(block_cache::cached_bytes(), block_cache::kMaxCachedBytes);
  EXPECT_GT(block_cache::cached_bytes(), 0u);
}

TEST(BlockCache, small_tensors_stay_with_malloc) {
  const std::size_t before = block_cache::cached_bytes();
  { Tensor small(DType::f32, {16}); }
  EXPECT_EQ(block_cache::cached_bytes(), before);
}

}  // namespace
}  // namespace cplab
