// One block's forward, merge and backward (SPEC §13.3). Scores, probabilities and accumulators are
// f32, as in FlashAttention's kernels; the block output is rounded to the input dtype when it is
// written, the only rounding the schedule adds over an unsharded kernel.
#include "sim/attention/block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/quiet_exp.hpp"

namespace cplab::sim {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float dot(const float* a, const float* b, std::int64_t d) {
  float s = 0.0f;
  for (std::int64_t e = 0; e < d; ++e) s += a[e] * b[e];
  return s;
}

// Inlined into the pair loops: a call per pair was a twentieth of the blocks' time.
[[gnu::always_inline]] inline bool visible(const BlockOperands& b, std::int64_t i, std::int64_t j) {
  const TokenFacts none{};
  return block_pair_visible(b.mask, b.diagonal, i, j, b.q_facts ? b.q_facts[i] : none,
                            b.k_facts ? b.k_facts[j] : none, b.rule);
}

}  // namespace

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    case DType::f16:
      return std::ldexp(1.0, -11);
    default:
      CPLAB_FAIL("attention runs in f32, bf16 or f16, not {}", dtype_name(dtype));
  }
}

float round_to(DType dtype, float v) {
  switch (dtype) {
    case DType::bf16:
      return static_cast<float>(bf16(v));
    case DType::f16:
      return static_cast<float>(f16(v));
    default:
      return v;
  }
}

void block_forward(const BlockOperands& b, DType dtype, float* out, std::int64_t out_stride,
                   float* lse, std::int64_t lse_stride) {
  // Scratch kept per thread: a sweep runs millions of small blocks, and two allocations each were
  // a tenth of their time. Nothing here yields, so ranks run as fibers cannot interleave in it.
  thread_local std::vector<float> scores, acc;
  scores.resize(static_cast<std::size_t>(b.keys));
  acc.resize(static_cast<std::size_t>(b.d));
  for (std::int64_t i = 0; i < b.queries; ++i) {
    const float* qi = b.q + i * b.q_stride;
    float top = kNegInf;
    for (std::int64_t j = 0; j < b.keys; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      scores[sj] = visible(b, i, j) ? b.scale * dot(qi, b.k + j * b.kv_stride, b.d) : kNegInf;
      top = std::max(top, scores[sj]);
    }
    float* oi = out + i * out_stride;
    if (top == kNegInf) {  // the block hides every key from this query
      std::fill(oi, oi + b.d, 0.0f);
      lse[i * lse_stride] = kNegInf;
      continue;
    }
    std::fill(acc.begin(), acc.end(), 0.0f);
    float sum = 0.0f;
    for (std::int64_t j = 0; j < b.keys; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      if (scores[sj] == kNegInf) continue;
      const float p = quiet_exp(scores[sj] - top);  // <= 1: the exponent is never positive
      sum += p;
      const float* vj = b.v + j * b.kv_stride;
      for (std::int64_t e = 0; e < b.d; ++e) acc[static_cast<std::size_t>(e)] += p * vj[e];
    }
    for (std::int64_t e = 0; e < b.d; ++e)
      oi[e] = round_to(dtype, acc[static_cast<std::size_t>(e)] / sum);
    lse[i * lse_stride] = top + std::log(sum);
  }
}

void merge_row(float* out, float& lse, const float* out_b, float lse_b, std::int64_t d) {
  if (lse_b == kNegInf) return;  // the block saw nothing: the running row stays
  if (lse == kNegInf) {          // nothing seen yet: the block is the running row
    std::copy(out_b, out_b + d, out);
    lse = lse_b;
    return;
  }
  const float hi = std::max(lse, lse_b), lo = std::min(lse, lse_b);
  const float merged = hi + std::log1p(quiet_exp(lo - hi));
  const float keep = quiet_exp(lse - merged), take = quiet_exp(lse_b - merged);
  for (std::int64_t e = 0; e < d; ++e) out[e] = out[e] * keep + out_b[e] * take;
  lse = merged;
}

void block_backward(const BlockOperands& b, const BlockGradients& g) {
  for (std::int64_t i = 0; i < b.queries; ++i) {
    const float lse = g.lse[i * g.lse_stride];
    if (lse == kNegInf) continue;  // the query saw no key at all: no gradient
    const float* qi = b.q + i * b.q_stride;
    const float* doi = g.dout + i * b.q_stride;
    const float delta = g.delta[i * g.lse_stride];
    float* dqi = g.dq + i * b.q_stride;
    for (std::int64_t j = 0; j < b.keys; ++j) {
      if (!visible(b, i, j)) continue;
      const float* kj = b.k + j * b.kv_stride;
      const float* vj = b.v + j * b.kv_stride;
      const float p = quiet_exp(b.scale * dot(qi, kj, b.d) - lse);
      const float ds = p * (dot(doi, vj, b.d) - delta);
      float* dkj = g.dk + j * b.kv_stride;
      float* dvj = g.dv + j * b.kv_stride;
      for (std::int64_t e = 0; e < b.d; ++e) {
        dqi[e] += b.scale * ds * kj[e];
        dkj[e] += b.scale * ds * qi[e];
        dvj[e] += p * doi[e];
      }
    }
  }
}

}  // namespace cplab::sim
