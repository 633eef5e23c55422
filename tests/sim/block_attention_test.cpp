// One block's forward, the stable merge and the backward (sim/attention/block_attention.hpp):
// split-and-merge equals one block, masked rows stay (0, -inf) without NaN, merges at logits of
// 1e4 stay finite and exact, the backward equals finite differences of the forward and splits
// over key blocks like the forward.
#include "sim/attention/block_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace cplab::sim {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::vector<float> values(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned x = seed * 2654435761u + 1;
  for (float& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

struct Block {
  std::int64_t nq = 4, nk = 10, d = 3;
  std::vector<float> q = values(12, 1), k = values(30, 2), v = values(30, 3);
  BlockOperands operands(std::int64_t k_begin, std::int64_t k_end, int mask = kMaskFull,
                         std::int64_t diagonal = 0) const {
    return {.q = q.data(),
            .k = k.data() + k_begin * d,
            .v = v.data() + k_begin * d,
            .q_stride = d,
            .kv_stride = d,
            .queries = nq,
            .keys = k_end - k_begin,
            .d = d,
            .mask = mask,
            .diagonal = diagonal,
            .scale = 1.0f / std::sqrt(static_cast<float>(d))};
  }
};

struct Forward {
  std::vector<float> out, lse;
};
Forward forward(const BlockOperands& b, DType dtype = DType::f32) {
  Forward f{std::vector<float>(static_cast<std::size_t>(b.queries * b.d)),
            std::vector<float>(static_cast<std::size_t>(b.queries))};
  block_forward(b, dtype, f.out.data(), b.d, f.lse.data(), 1);
  return f;
}

TEST(BlockAttention, TwoKeyBlocksMergedEqualOneBlock) {
  const Block blk;
  const Forward whole = forward(blk.operands(0, 10));
  Forward run{std::vector<float>(12, 0.0f), std::vector<float>(4, kNegInf)};
  for (auto [lo, hi] : {std::pair{0, 6}, std::pair{6, 10}}) {
    const Forward part = forward(blk.operands(lo, hi));
    for (int i = 0; i < 4; ++i)
      merge_row(&run.out[i * 3], run.lse[i], &part.out[i * 3], part.lse[i], 3);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(run.lse[i], whole.lse[i], 1e-6);
    for (int e = 0; e < 3; ++e) EXPECT_NEAR(run.out[i * 3 + e], whole.out[i * 3 + e], 1e-6);
  }
}

TEST(BlockAttention, OutputIsRoundedToTheInputDtype) {
  const Block blk;
  const Forward f = forward(blk.operands(0, 10), DType::bf16);
  const Forward exact = forward(blk.operands(0, 10));
  for (std::size_t i = 0; i < f.out.size(); ++i) {
    EXPECT_EQ(f.out[i], round_to(DType::bf16, f.out[i]));
    EXPECT_NEAR(f.out[i], exact.out[i], std::abs(exact.out[i]) * 0x1.0p-8 + 1e-12);
  }
}

TEST(BlockAttention, AFullyMaskedRowIsZeroWithLseMinusInfinityAndMergesToNothing) {
  const Block blk;
  // Causal with diagonal -1: query 0 sees no key of the block.
  const Forward f = forward(blk.operands(0, 4, kMaskCausal, -1));
  EXPECT_EQ(f.lse[0], kNegInf);
  for (int e = 0; e < 3; ++e) EXPECT_EQ(f.out[e], 0.0f);
  std::vector<float> out(3, 0.0f);
  float lse = kNegInf;
  merge_row(out.data(), lse, f.out.data(), f.lse[0], 3);
  EXPECT_EQ(lse, kNegInf);
  for (float x : out) EXPECT_EQ(x, 0.0f);
  // A finite running row is left as it is by a masked block.
  std::vector<float> seen{0.5f, -0.25f, 1.0f};
  float seen_lse = 3.0f;
  merge_row(seen.data(), seen_lse, f.out.data(), kNegInf, 3);
  EXPECT_EQ(seen_lse, 3.0f);
  EXPECT_EQ(seen[1], -0.25f);
}

TEST(BlockAttention, MergesAtLogitsOfTenThousandStayFiniteAndExact) {
  for (float gap : {0.0f, 1.0f, 88.0f, 500.0f, -500.0f, 5000.0f}) {
    std::vector<float> out{1.0f, -1.0f};
    const std::vector<float> block{-2.0f, 4.0f};
    float lse = 1e4f;
    merge_row(out.data(), lse, block.data(), 1e4f + gap, 2);
    const double hi = std::max(0.0, double{gap}), lo = std::min(0.0, double{gap});
    const double want_lse = 1e4 + hi + std::log1p(std::exp(lo - hi));
    const double w_run = std::exp(1e4 - want_lse), w_block = std::exp(1e4 + gap - want_lse);
    EXPECT_TRUE(std::isfinite(lse) && std::isfinite(out[0]) && std::isfinite(out[1])) << gap;
    EXPECT_NEAR(lse, want_lse, 1e-3) << gap;
    // An f32 LSE near 1e4 is known to its ulp, 2^-10: each weight to about twice that, relatively.
    const double tol = 4 * 0x1.0p-10 * 4.0;
    EXPECT_NEAR(out[0], 1.0 * w_run - 2.0 * w_block, tol) << gap;
    EXPECT_NEAR(out[1], -1.0 * w_run + 4.0 * w_block, tol) << gap;
  }
}

// Σ out·dO of the block, in f32 as the forward computes it.
double objective(const Block& blk, const std::vector<float>& dout, int mask, std::int64_t diag) {
  const Forward f = forward(blk.operands(0, blk.nk, mask, diag));
  double s = 0.0;
  for (std::size_t i = 0; i < f.out.size(); ++i) s += double{f.out[i]} * dout[i];
  return s;
}

struct Grads {
  std::vector<float> dq, dk, dv;
};
Grads backward(const Block& blk, const std::vector<float>& dout, int mask, std::int64_t diag,
               const std::vector<std::pair<std::int64_t, std::int64_t>>& key_blocks) {
  const Forward f = forward(blk.operands(0, blk.nk, mask, diag));
  std::vector<float> delta(static_cast<std::size_t>(blk.nq), 0.0f);
  for (std::int64_t i = 0; i < blk.nq; ++i) {
    for (std::int64_t e = 0; e < blk.d; ++e)
      delta[static_cast<std::size_t>(i)] += dout[static_cast<std::size_t>(i * blk.d + e)] *
                                            f.out[static_cast<std::size_t>(i * blk.d + e)];
  }
  Grads g{std::vector<float>(blk.q.size()), std::vector<float>(blk.k.size()),
          std::vector<float>(blk.v.size())};
  for (auto [lo, hi] : key_blocks) {
    // A key block's causal diagonal moves with its first key.
    block_backward(blk.operands(lo, hi, mask, diag - lo), {.dout = dout.data(),
                                                           .lse = f.lse.data(),
                                                           .delta = delta.data(),
                                                           .lse_stride = 1,
                                                           .dq = g.dq.data(),
                                                           .dk = g.dk.data() + lo * blk.d,
                                                           .dv = g.dv.data() + lo * blk.d});
  }
  return g;
}

TEST(BlockAttention, BackwardEqualsFiniteDifferencesOfTheForward) {
  const std::vector<float> dout = values(12, 7);
  for (int mask : {kMaskFull, kMaskCausal}) {
    Block blk;
    const std::int64_t diag = 6;
    const Grads g = backward(blk, dout, mask, diag, {{0, blk.nk}});
    const float h = 1e-2f;
    const auto check = [&](std::vector<float>& x, const std::vector<float>& grad,
                           const char* what) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float keep = x[i];
        x[i] = keep + h;
        const double up = objective(blk, dout, mask, diag);
        x[i] = keep - h;
        const double down = objective(blk, dout, mask, diag);
        x[i] = keep;
        EXPECT_NEAR(grad[i], (up - down) / (2 * h), 2e-3) << what << " " << i << " mask " << mask;
      }
    };
    check(blk.q, g.dq, "dQ");
    check(blk.k, g.dk, "dK");
    check(blk.v, g.dv, "dV");
  }
}

TEST(BlockAttention, BackwardSplitOverKeyBlocksEqualsOneBlock) {
  const Block blk;
  const std::vector<float> dout = values(12, 9);
  const Grads whole = backward(blk, dout, kMaskCausal, 6, {{0, 10}});
  const Grads split = backward(blk, dout, kMaskCausal, 6, {{0, 3}, {3, 7}, {7, 10}});
  for (std::size_t i = 0; i < whole.dq.size(); ++i) EXPECT_NEAR(split.dq[i], whole.dq[i], 1e-6);
  for (std::size_t i = 0; i < whole.dk.size(); ++i) {
    EXPECT_FLOAT_EQ(split.dk[i], whole.dk[i]);
    EXPECT_FLOAT_EQ(split.dv[i], whole.dv[i]);
  }
}

}  // namespace
}  // namespace cplab::sim
