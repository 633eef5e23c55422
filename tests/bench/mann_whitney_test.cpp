// The U test behind `cplab bench compare`, on samples whose p-values are known.
#include "perf/mann_whitney.hpp"

#include <gtest/gtest.h>

namespace cplab::perf {
namespace {

TEST(MannWhitney, separated_samples_of_five_have_the_exact_smallest_p) {
  const UTest t = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 0.0);
  EXPECT_NEAR(t.p_value, 2.0 / 252.0, 1e-12);  // 2 of the C(10,5) arrangements are as extreme
}

TEST(MannWhitney, three_against_three_can_never_reach_five_percent) {
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_value, 0.1, 1e-12);
}

TEST(MannWhitney, interleaved_samples_show_no_difference) {
  const UTest t = mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8});
  EXPECT_DOUBLE_EQ(t.u, 6.0);
  EXPECT_GT(t.p_value, 0.5);
}

TEST(MannWhitney, is_symmetric_and_handles_ties_and_equal_samples) {
  const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4}, b = {3, 4, 4, 5, 5, 6, 7};
  EXPECT_FALSE(mann_whitney_u(a, b).exact);  // ties: the normal approximation
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, mann_whitney_u(b, a).p_value, 1e-12);
  EXPECT_LT(mann_whitney_u(a, b).p_value, 0.05);
  EXPECT_DOUBLE_EQ(mann_whitney_u({2, 2, 2}, {2, 2, 2}).p_value, 1.0);
}

TEST(MannWhitney, large_separated_samples_use_the_normal_approximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(i);
    b.push_back(100 + i);
  }
  const UTest t = mann_whitney_u(a, b);
  EXPECT_FALSE(t.exact);
  EXPECT_LT(t.p_value, 1e-8);
}

}  // namespace
}  // namespace cplab::perf
