// quiet_exp is exp, value for value: every float from -110 to -100 (the underflow edge and the
// subnormal results above it), a spread of doubles around exp's edges, and the special values.
#include "core/quiet_exp.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace cplab {
namespace {

TEST(QuietExp, equals_expf_bit_for_bit_across_the_underflow_edge) {
  std::int64_t checked = 0;
  for (float x = -110.0f; x <= -100.0f; x = std::nextafter(x, 0.0f), ++checked) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(quiet_exp(x)), std::bit_cast<std::uint32_t>(std::exp(x)))
        << "x = " << x;
  }
  EXPECT_GT(checked, 100000);
  for (float x : {0.0f, -0.0f, -1.0f, -87.5f, 3.0f}) EXPECT_EQ(quiet_exp(x), std::exp(x)) << x;
  EXPECT_EQ(quiet_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(quiet_exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST(QuietExp, equals_exp_bit_for_bit_around_its_edges) {
  for (double centre : {-1024.0, -745.2, -708.4, -1.0, 0.0}) {
    double x = centre;
    for (int step = 0; step < 2000; ++step) x = std::nextafter(x, -INFINITY);
    for (int step = 0; step < 4000; ++step, x = std::nextafter(x, INFINITY)) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(quiet_exp(x)),
                std::bit_cast<std::uint64_t>(std::exp(x)))
          << "x = " << x;
    }
  }
  for (double x = -2000.0; x < 10.0; x += 0.37) ASSERT_EQ(quiet_exp(x), std::exp(x)) << x;
  EXPECT_EQ(quiet_exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isnan(quiet_exp(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
}  // namespace cplab
