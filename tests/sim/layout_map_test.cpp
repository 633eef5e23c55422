// The one LayoutMap: it refuses a length that does not divide over its ranks and arguments out of
// range, whatever the layout, and every registered layout's map at C = 1 is the identity. What
// one layout's form derives, refuses or answers lives in its own file (layouts/ID_test.cpp).
#include "layouts/layout_map.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

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

// A length that does not divide over the ranks (L = 8 over C = 3), whatever the layout.
TEST(LayoutMap, refuses_parameters_its_form_cannot_index) {
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    EXPECT_NE(error_of([&] { sim::LayoutMap(layout, 3, 8); }).find("does not divide over cp=3"),
              std::string::npos)
        << layout.name;
  }
}

TEST(LayoutMap, every_layout_at_cp1_is_the_identity) {
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    const sim::LayoutMap map(layout, 1, 7);
    EXPECT_EQ(map.local_index(0), (Ints{0, 1, 2, 3, 4, 5, 6})) << layout.name;
    EXPECT_EQ(map.owner(5).offset, 5) << layout.name;
  }
}

// Every layout whose map is C and L alone, at C = 2 and L = 8: a rank, a local offset or a slot out
// of range is refused, and each rank's index map is its global_index, whose owner is that rank.
TEST(LayoutMap, checks_its_arguments) {
  int layouts_checked = 0;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    if (layout.cp_off || layout.map.source != sim::MapSource::shape) continue;
    ++layouts_checked;
    const sim::LayoutMap map(layout, 2, 8);
    EXPECT_NE(error_of([&] { map.global_index(2, 0); }), "") << layout.name;
    EXPECT_NE(error_of([&] { map.global_index(0, 4); }), "") << layout.name;
    EXPECT_NE(error_of([&] { map.owner(8); }), "") << layout.name;
    for (std::int64_t r = 0; r < 2; ++r) {
      const Ints index = map.local_index(r);
      ASSERT_EQ(index.size(), 4u) << layout.name;
      for (std::int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(index[static_cast<std::size_t>(k)], map.global_index(r, k)) << layout.name;
        EXPECT_EQ(map.owner(index[static_cast<std::size_t>(k)]).rank, r) << layout.name;
      }
    }
  }
  EXPECT_GE(layouts_checked, 1) << "no layout maps from C and L alone";
}

}  // namespace
}  // namespace cplab::simtest
