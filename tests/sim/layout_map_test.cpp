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

// The closed forms are an implementation's: what one answers is checked before anything indexes
// by it. Descriptors whose parameter check is gone (prepare = nullptr) hand their forms wrong
// parameters: a chunk past the stream, a chunk twice, a ring degree that does not divide C.
TEST(LayoutMap, checks_what_its_closed_form_answers) {
  sim::LayoutDescriptor magi = sim::layout_descriptor("magi");
  magi.prepare = nullptr;
  const sim::LayoutMap past(magi, 2, 8, MapParams{.table = {0, 4, 2, 3}, .unit = 2});
  EXPECT_NE(error_of([&] {
              past.global_index(0, 2);
            }).find("magi closed form: global_index(0, 2) = 8, outside the stream [0, L=8)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              past.local_index(0);
            }).find("magi closed form: rank 0's index map: entry 2 is 8, outside [0, 8)"),
            std::string::npos);
  const sim::LayoutMap twice(magi, 2, 8, MapParams{.table = {0, 0, 1, 3}, .unit = 2});
  EXPECT_NE(error_of([&] {
              twice.local_index(0);
            }).find("rank 0's index map: entry 2 is 0, a slot an earlier entry already names"),
            std::string::npos);
  sim::LayoutDescriptor usp = sim::layout_descriptor("usp");
  usp.prepare = nullptr;
  const sim::LayoutMap ring_of_three(usp, 4, 16, MapParams{.table = {}, .unit = 3});
  EXPECT_NE(error_of([&] {
              ring_of_three.owner(12);
            }).find("usp closed form: owner(12) = rank -1 offset 2, outside cp=4 ranks"),
            std::string::npos);
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
