// The one LayoutMap: it derives what its form needs once (magi's inverse assignment), refuses
// parameters its form cannot index (with the layout's own message), and a copy serves its own
// arrays. Every registered layout's map at C = 1 is the identity.
#include "sim/layout_map.hpp"

#include <gtest/gtest.h>

#include "reference/types/error.hpp"

namespace cplab::simtest {
namespace {

using Ints = std::vector<std::int64_t>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(LayoutMap, magi_inverse_makes_owner_the_inverse_of_global_index) {
  // SPEC example 5: ranks get chunks [0,7] [1,6] [2,5] [3,4], K = 4.
  const sim::LayoutMap map(sim::layout_descriptor("magi"), 4, 32,
                           MapParams{.table = {0, 7, 1, 6, 2, 5, 3, 4}, .unit = 4});
  EXPECT_EQ(map.aux(), (Ints{0, 2, 4, 6, 7, 5, 3, 1}));
  EXPECT_EQ(map.global_index(0, 4), 28);  // r0 idx = [0,1,2,3,28,29,30,31]
  for (std::int64_t r = 0; r < 4; ++r) {
    for (std::int64_t k = 0; k < map.local_len(); ++k) {
      const index_math::Slot s = map.owner(map.global_index(r, k));
      EXPECT_EQ(s.rank, r);
      EXPECT_EQ(s.offset, k);
    }
  }
  const sim::LayoutMap copy = map;  // its view points into its own arrays
  EXPECT_NE(copy.view().table, map.view().table);
  EXPECT_EQ(copy.local_index(3), map.local_index(3));
}

TEST(LayoutMap, refuses_parameters_its_form_cannot_index) {
  const auto& magi = sim::layout_descriptor("magi");
  EXPECT_NE(error_of([&] {
              sim::LayoutMap(magi, 2, 8, MapParams{{0, 1, 1, 3}, 2});
            }).find("chunk 1 is assigned twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 8, MapParams{{0, 4, 2, 3}, 2}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 6, MapParams{{0, 1, 2}, 2}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(magi, 2, 8, MapParams{{0, 1, 2, 3}, 0}); }), "");
  const auto& thd = sim::layout_descriptor("thd");
  EXPECT_NE(error_of([&] {
              sim::LayoutMap(thd, 2, 8, MapParams{{0, 3, 8}, 0});
            }).find("not a multiple of 2C=4"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim::LayoutMap(thd, 2, 8, MapParams{{0, 8, 4}, 0}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(thd, 2, 8, MapParams{}); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(sim::layout_descriptor("head-tail"), 2, 6); }), "");
  EXPECT_NE(error_of([&] { sim::LayoutMap(sim::layout_descriptor("contiguous"), 3, 8); }), "");
}

TEST(LayoutMap, every_layout_at_cp1_is_the_identity) {
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    const sim::LayoutMap map(layout, 1, 7);
    EXPECT_EQ(map.local_index(0), (Ints{0, 1, 2, 3, 4, 5, 6})) << layout.name;
    EXPECT_EQ(map.owner(5).offset, 5) << layout.name;
  }
}

TEST(LayoutMap, checks_its_arguments) {
  const sim::LayoutMap map(sim::layout_descriptor("head-tail"), 2, 8);
  EXPECT_NE(error_of([&] { map.global_index(2, 0); }), "");
  EXPECT_NE(error_of([&] { map.global_index(0, 4); }), "");
  EXPECT_NE(error_of([&] { map.owner(8); }), "");
  EXPECT_EQ(map.local_index(1), (Ints{2, 3, 4, 5}));
}

}  // namespace
}  // namespace cplab::simtest
