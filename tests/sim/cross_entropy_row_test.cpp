// The fused row kernel of the sim's loss (its own vectorised exp included) against the
// double-precision formula, for vocabularies that do and do not fill whole vectors, logits far
// apart (underflowing exponentials) and the target at either end of the row.
#include "sim/cross_entropy_row.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace cplab::simtest {
namespace {

TEST(CrossEntropyRow, vector_exp_matches_std_exp_to_a_few_ulps) {
  std::vector<float> x;
  for (float v = -100.0f; v <= 0.0f; v += 0.0137f) x.push_back(v);
  x.push_back(0.0f);
  x.push_back(-std::numeric_limits<float>::infinity());
  std::vector<float> got(x.size());
  if (!sim::vector_exp_nonpositive(x.data(), static_cast<std::int64_t>(x.size()), got.data()))
    GTEST_SKIP() << "this CPU has no AVX2/FMA: the kernel uses std::exp";
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    if (x[i] < -87.33f) {
      EXPECT_LE(got[i], 1.2e-38f) << "x = " << x[i];  // flushed: below the normal floats
      continue;
    }
    EXPECT_NEAR(got[i], want, 4e-7 * want) << "x = " << x[i];
  }
}

// grad = scale · (softmax - onehot) and the unscaled CE, in double.
double reference_row(const std::vector<float>& z, std::int64_t y, double scale,
                     std::vector<double>& grad) {
  double m = -INFINITY, s = 0.0;
  for (float v : z) m = std::max(m, static_cast<double>(v));
  for (float v : z) s += std::exp(static_cast<double>(v) - m);
  const double lse = m + std::log(s);
  grad.resize(z.size());
  for (std::size_t v = 0; v < z.size(); ++v)
    grad[v] = (std::exp(z[v] - lse) - (static_cast<std::int64_t>(v) == y ? 1.0 : 0.0)) * scale;
  return lse - z[static_cast<std::size_t>(y)];
}

TEST(CrossEntropyRow, matches_the_double_formula) {
  std::mt19937 rng(5);
  for (std::int64_t vocab : {1, 2, 7, 8, 9, 31, 33, 1000, 8197, 32000}) {
    for (float spread : {0.1f, 3.0f, 60.0f}) {
      std::normal_distribution<float> normal(0.0f, spread);
      std::vector<float> z(static_cast<std::size_t>(vocab));
      for (float& v : z) v = normal(rng);
      for (std::int64_t y : {std::int64_t{0}, vocab / 2, vocab - 1}) {
        std::vector<float> grad(z.size(), std::nanf(""));
        std::vector<double> want;
        const double scale = 0.37;
        const double ce = sim::cross_entropy_row(z.data(), vocab, y, scale, grad.data());
        const double want_ce = reference_row(z, y, scale, want);
        ASSERT_NEAR(ce, want_ce, 1e-5 * std::max(1.0, std::abs(want_ce)))
            << "V=" << vocab << " spread " << spread << " target " << y;
        for (std::size_t v = 0; v < z.size(); ++v) {
          ASSERT_NEAR(grad[v], want[v], 1e-7 + 1e-5 * std::abs(want[v]))
              << "V=" << vocab << " spread " << spread << " target " << y << " class " << v;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cplab::simtest
