// The fused shifted-CE kernel against a host computation in double: every logits/gradient type
// pair, vocabularies that do and do not vectorise, rows that do not contribute, -inf logits; and
// the in-order sum.
#include <cmath>
#include <random>

#include "core/dtype.hpp"
#include "gpu/kernels/loss_shifted_ce.hpp"
#include "gpu_test.hpp"

namespace cplab::gputest {
namespace {

using gpu::DeviceBuffer;

class LossKernels : public GpuTest {};

void check_fused(std::int64_t vocab, gpu::LossElem in, gpu::LossElem out, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message()
               << "V " << vocab << " logits " << (in == gpu::LossElem::f32 ? "f32" : "bf16")
               << " grad " << (out == gpu::LossElem::f32 ? "f32" : "bf16"));
  const std::int64_t rows = 9;
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(static_cast<std::size_t>(rows * vocab));
  for (auto& x : logits) x = normal(rng);
  if (vocab > 2) logits[static_cast<std::size_t>(2 * vocab + 1)] = -INFINITY;  // a masked-out class
  std::vector<std::int64_t> targets(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    targets[r] = r % 4 == 3 ? -1 : static_cast<std::int64_t>(rng() % vocab);
  if (vocab > 2) targets[2] = 0;
  std::vector<bf16> logits_bf16;
  for (float& x : logits) {
    logits_bf16.emplace_back(x);
    if (in == gpu::LossElem::bf16)
      x = static_cast<float>(logits_bf16.back());  // what the device reads
  }
  const DeviceBuffer d_logits = in == gpu::LossElem::f32 ? gpu::upload_vector(logits, nullptr)
                                                         : gpu::upload_vector(logits_bf16, nullptr);
  const std::size_t grad_bytes =
      static_cast<std::size_t>(rows * vocab) * (out == gpu::LossElem::f32 ? 4 : 2);
  DeviceBuffer grad(grad_bytes), row_loss(static_cast<std::size_t>(rows) * 4), sum(8);
  const DeviceBuffer d_targets = gpu::upload_vector(targets, nullptr);
  const float scale = 2.0f / 7.0f;  // C / N of some group
  gpu::fused_shifted_ce({.logits = d_logits.get(),
                         .logits_elem = in,
                         .grad = grad.get(),
                         .grad_elem = out,
                         .rows = rows,
                         .vocab = vocab,
                         .targets = d_targets.as<std::int64_t>(),
                         .scale = scale,
                         .row_loss = row_loss.as<float>()},
                        nullptr);
  gpu::sum_in_order(row_loss.as<float>(), rows, sum.as<double>(), nullptr);
  const auto losses = fetch<float>(row_loss, static_cast<std::size_t>(rows));
  std::vector<float> g(static_cast<std::size_t>(rows * vocab));
  if (out == gpu::LossElem::f32) {
    g = fetch<float>(grad, g.size());
  } else {
    const auto raw = fetch<bf16>(grad, g.size());
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(raw[i]);
  }
  const double grad_tol = out == gpu::LossElem::f32 ? 1e-5 : 1e-2;
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* z = logits.data() + r * vocab;
    double m = -INFINITY;
    for (std::int64_t v = 0; v < vocab; ++v) m = std::max(m, static_cast<double>(z[v]));
    double s = 0.0;
    for (std::int64_t v = 0; v < vocab; ++v) s += std::exp(static_cast<double>(z[v]) - m);
    const double lse = m + std::log(s);
    const std::int64_t y = targets[r];
    const double ce = y < 0 ? 0.0 : lse - static_cast<double>(z[y]);
    total += ce;
    EXPECT_NEAR(losses[r], ce, 1e-5 * std::max(1.0, std::abs(ce))) << "row " << r;
    for (std::int64_t v = 0; v < vocab; ++v) {
      const double p = y < 0 ? 0.0 : std::exp(static_cast<double>(z[v]) - lse);
      const double want = y < 0 ? 0.0 : (p - (v == y ? 1.0 : 0.0)) * scale;
      // The kernel's lse is a float: off by up to about an ulp of |lse| (2^-23·|lse|), which moves
      // every softmax term by that much relatively. For a target class with p near 1, p - 1 is
      // tiny and that error would exceed a purely relative bound, so it is allowed explicitly.
      const double lse_error = scale * p * 2.5e-7 * (1.0 + std::abs(lse));
      ASSERT_NEAR(g[r * vocab + v], want, grad_tol * (std::abs(want) + 1e-3) + lse_error)
          << "row " << r << " class " << v;
    }
  }
  EXPECT_NEAR(fetch<double>(sum, 1)[0], total, 1e-4 * std::max(1.0, total));
}

TEST_F(LossKernels, fused_forward_backward_matches_double_precision) {
  std::mt19937 rng(11);
  for (std::int64_t vocab : {1, 2, 37, 1024, 4100, 32768}) {
    for (gpu::LossElem in : {gpu::LossElem::f32, gpu::LossElem::bf16}) {
      for (gpu::LossElem out : {gpu::LossElem::f32, gpu::LossElem::bf16})
        check_fused(vocab, in, out, rng);
    }
  }
}

TEST_F(LossKernels, a_nan_logit_makes_its_rows_loss_and_gradient_nan) {
  // V = 37 < 256 threads: every thread sees one logit, so the NaN is the first (and only) value its
  // thread meets. Row 1 has no NaN and must stay finite.
  const std::int64_t rows = 2, vocab = 37;
  std::vector<float> logits(static_cast<std::size_t>(rows * vocab), 0.5f);
  logits[5] = NAN;
  const std::vector<std::int64_t> targets = {3, 3};
  const DeviceBuffer d_logits = gpu::upload_vector(logits, nullptr),
                     d_targets = gpu::upload_vector(targets, nullptr);
  DeviceBuffer grad(static_cast<std::size_t>(rows * vocab) * 4), row_loss(rows * 4);
  gpu::fused_shifted_ce({.logits = d_logits.get(),
                         .grad = grad.get(),
                         .rows = rows,
                         .vocab = vocab,
                         .targets = d_targets.as<std::int64_t>(),
                         .scale = 1.0f,
                         .row_loss = row_loss.as<float>()},
                        nullptr);
  const auto losses = fetch<float>(row_loss, rows);
  const auto g = fetch<float>(grad, static_cast<std::size_t>(rows * vocab));
  EXPECT_TRUE(std::isnan(losses[0])) << losses[0];
  EXPECT_TRUE(std::isnan(g[0])) << g[0];
  EXPECT_NEAR(losses[1], std::log(37.0), 1e-5);
  EXPECT_TRUE(std::isfinite(g[vocab]));
}

TEST_F(LossKernels, sum_in_order_is_the_same_bits_every_time) {
  std::vector<float> values(100000);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = std::sin(static_cast<float>(i)) * 1e3f;
  const DeviceBuffer d = gpu::upload_vector(values, nullptr);
  DeviceBuffer a(8), b(8);
  gpu::sum_in_order(d.as<float>(), static_cast<std::int64_t>(values.size()), a.as<double>(),
                    nullptr);
  gpu::sum_in_order(d.as<float>(), static_cast<std::int64_t>(values.size()), b.as<double>(),
                    nullptr);
  double host = 0.0;
  for (float v : values) host += v;
  const double x = fetch<double>(a, 1)[0], y = fetch<double>(b, 1)[0];
  EXPECT_EQ(x, y);
  EXPECT_NEAR(x, host, 1e-6 * std::abs(host) + 1e-6);
}

}  // namespace
}  // namespace cplab::gputest
