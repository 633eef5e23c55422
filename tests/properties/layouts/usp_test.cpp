// usp's own generator options: R is drawn among the divisors of C, the degenerate R = 1 (Ulysses
// only) and R = C (ring only) as well as two-level ones; every shrink keeps R dividing C, offers
// smaller R and, at a smaller C, a two-level R where one exists; the case key R= round-trips and
// is printed only when R differs from 1. Its CP attention at R = 2, U = 2: a worked case of the
// two levels passes within the derived tolerance, and sends what the schedules count in either
// dtype.
#include "layouts/usp.hpp"

#include <gtest/gtest.h>

#include <set>

#include "properties/generators.hpp"
#include "properties/harness.hpp"
#include "tests/properties/cp_attention_cases.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;

std::set<I> drawn_ring_degrees(I cp) {
  GenOptions options;
  options.cp = {cp};
  const rc::Gen<Case> gen = gen_case(layout_entry("usp"), options);
  std::set<I> seen;
  for (int i = 0; i < 200; ++i) {
    const Case c = gen(rc::Random(static_cast<std::uint64_t>(104729 * i + 3)), i % 101).value();
    EXPECT_EQ(c.spec.cp, cp);
    seen.insert(layouts::usp_ring_degree.of(c.spec));
  }
  return seen;
}

TEST(UspGenerators, RingDegreesAreTheDivisorsOfCDegenerateOnesIncluded) {
  EXPECT_EQ(drawn_ring_degrees(1), (std::set<I>{1}));
  EXPECT_EQ(drawn_ring_degrees(2), (std::set<I>{1, 2}));
  EXPECT_EQ(drawn_ring_degrees(7), (std::set<I>{1, 7}));
  EXPECT_EQ(drawn_ring_degrees(8), (std::set<I>{1, 2, 4, 8}));
  EXPECT_EQ(drawn_ring_degrees(12), (std::set<I>{1, 2, 3, 4, 6, 12}));
}

TEST(UspGenerators, ShrinksKeepRDividingCAndReachTwoLevels) {
  const Case c = parse_case("usp cp=8 S=64 R=4");
  std::set<std::pair<I, I>> offered;  // (C, R)
  for (const Case& s : domain_shrinks(c)) {
    SCOPED_TRACE(print_case(s));
    ASSERT_EQ(s.spec.cp % layouts::usp_ring_degree.of(s.spec), 0);
    EXPECT_NO_THROW(Subject{s});  // the reference plans it
    offered.insert({s.spec.cp, layouts::usp_ring_degree.of(s.spec)});
  }
  for (const std::pair<I, I>& want : {std::pair<I, I>{8, 1}, {8, 2}, {4, 4}, {4, 2}, {6, 2}}) {
    EXPECT_TRUE(offered.count(want)) << "C=" << want.first << " R=" << want.second;
  }
}

TEST(UspGenerators, TheRingDegreeRoundTripsInTheCaseString) {
  const Case two = parse_case("usp cp=4 S=16 R=2");
  EXPECT_EQ(layouts::usp_ring_degree.of(two.spec), 2);
  const std::string printed = print_case(two);
  EXPECT_NE(printed.find(" seed=0 R=2"), std::string::npos) << printed;
  EXPECT_EQ(parse_case(printed), two);
  EXPECT_EQ(print_case(parse_case(printed)), printed);
  const std::string plain = print_case(parse_case("usp cp=4 S=16"));
  EXPECT_EQ(plain.find("R="), std::string::npos) << plain;
  EXPECT_FALSE(parse_case("usp cp=4 S=16 R=2") == parse_case("usp cp=4 S=16 R=4"));
  EXPECT_THROW(parse_case("usp cp=4 S=16 R=0"), Error);
}

INSTANTIATE_TEST_SUITE_P(Usp, CpAttentionOnSim,
                         ::testing::Values("usp cp=4 R=2 dtype=bf16 rows=1 S=40 dim=4 seed=5"));

TEST(CpAttentionBytes, UspTwoLevelsScaleWithTheDtypeAsScheduled) {
  expect_bytes_scale_as_scheduled("usp cp=4 R=2 rows=1 S=16 dim=2", sim::AttentionAlgo::usp, 4, 1);
}

}  // namespace
}  // namespace cplab::properties
