// magi's inverse assignment (chunk → its place in the rank-major list) and its refusals.
#include "gpu/host/magi_slots.hpp"

#include <gtest/gtest.h>

#include "reference/types/error.hpp"
#include "sim/index_math.hpp"

namespace cplab::gpu {
namespace {

TEST(MagiSlots, inverse_makes_owner_the_inverse_of_global_index) {
  // SPEC example 5: ranks get chunks [0,7] [1,6] [2,5] [3,4], K = 4.
  const std::vector<std::int64_t> rank_chunks = {0, 7, 1, 6, 2, 5, 3, 4};
  const std::vector<std::int64_t> slot = magi_chunk_slots(rank_chunks, 4);
  EXPECT_EQ(slot, (std::vector<std::int64_t>{0, 2, 4, 6, 7, 5, 3, 1}));
  const index_math::MagiMap map{4, 4, 2, rank_chunks.data(), slot.data()};
  EXPECT_EQ(map.global_index(0, 4), 28);  // r0 idx = [0,1,2,3,28,29,30,31]
  for (std::int64_t r = 0; r < 4; ++r) {
    for (std::int64_t k = 0; k < map.local_len(); ++k) {
      const index_math::Slot s = map.owner(map.global_index(r, k));
      EXPECT_EQ(s.rank, r);
      EXPECT_EQ(s.offset, k);
    }
  }
}

TEST(MagiSlots, refuses_what_is_not_an_even_permutation) {
  EXPECT_THROW(magi_chunk_slots({0, 1, 1, 3}, 2), Error);  // chunk 1 twice
  EXPECT_THROW(magi_chunk_slots({0, 4, 2, 3}, 2), Error);  // chunk 4 of 4
  EXPECT_THROW(magi_chunk_slots({0, 1, 2}, 2), Error);     // 3 chunks on 2 ranks
  try {
    magi_chunk_slots({0, 1, 1, 3}, 2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 1 is assigned twice"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cplab::gpu
