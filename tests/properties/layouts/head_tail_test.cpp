// head-tail's own property-machinery facts: its closed form gives SPEC §9's head-tail example, and
// its BSHD rows shrink toward its unit's multiple (2C).
#include <gtest/gtest.h>

#include <algorithm>

#include "properties/generators.hpp"
#include "tests/properties/closed_form_examples.hpp"

namespace cplab::properties {
namespace {

TEST(LayoutTable, HeadTailClosedFormGivesSpecExample) {
  expect_maps("head-tail", 4, 16, nullptr,
              {{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}});
}

TEST(Generators, HeadTailBshdShrinksGoTowardTheUnitsMultiple) {
  // BSHD rows toward the unit's multiple (head-tail: 2C = 6).
  const std::vector<Case> bshd = domain_shrinks(parse_case("head-tail cp=3 S=23 rows=2 seed=1"));
  for (std::int64_t len : {22, 19, 18, 11}) {
    EXPECT_TRUE(std::any_of(bshd.begin(), bshd.end(), [&](const Case& s) {
      return s.seq_len == len && s.spec.cp == 3;
    })) << len;
  }
}

}  // namespace
}  // namespace cplab::properties
