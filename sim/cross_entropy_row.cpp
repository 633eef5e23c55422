#include "sim/cross_entropy_row.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cplab::sim {
namespace {

// Three passes over one row: its max (the pass that reads the logits, from L2 when the previous
// row prefetched them, else from memory), exp(z - max) summed and kept (the AVX2 path keeps them
// in a scratch row, the portable one in the gradient), then the gradient as their scaled copy.
// The row (V floats, 128 KB at V = 32000) stays in this core's L2 between the passes, so memory
// sees one read of the logits and one write of the gradient.
double finish_row(const float* z, std::int64_t target, double scale, float top, double sum,
                  float* grad) {
  const double logsumexp = static_cast<double>(top) + std::log(sum);
  grad[target] =
      static_cast<float>((std::exp(static_cast<double>(z[target]) - logsumexp) - 1.0) * scale);
  return logsumexp - static_cast<double>(z[target]);
}

double portable_row(const float* z, std::int64_t vocab, std::int64_t target, double scale,
                    float* grad) {
  float top = -std::numeric_limits<float>::infinity();
  for (std::int64_t v = 0; v < vocab; ++v) top = std::max(top, z[v]);
  double sum = 0.0;
  for (std::int64_t v = 0; v < vocab; ++v) {
    grad[v] = std::exp(z[v] - top);
    sum += grad[v];
  }
  const auto factor = static_cast<float>(scale / sum);
  for (std::int64_t v = 0; v < vocab; ++v) grad[v] *= factor;
  return finish_row(z, target, scale, top, sum, grad);
}

#if defined(__x86_64__)
#define CPLAB_AVX2 __attribute__((target("avx2,fma")))

// exp(x) for x <= 0: x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so n·ln2 is exact), e^r by
// its degree-7 Taylor polynomial (truncation below 1e-8 relative), 2^n built in the exponent
// bits. Below -87.33 (where 2^n would leave the normal range) the result is 0; the true value
// is under 1.2e-38 there, far below the gradient's tolerance and a softmax sum of at least 1.
CPLAB_AVX2 inline __m256 exp_nonpositive(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33f), _CMP_GE_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.33f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), underflow);
}

CPLAB_AVX2 inline double sum_lanes(__m256 v) {
  const __m256d wide = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, wide);
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// This thread's buffer for one row's exponentials: they stay in L2 between the sum and the
// scaling, so the gradient's own lines are only ever written whole (never read for ownership).
float* row_scratch(std::int64_t vocab) {
  thread_local std::vector<float> scratch;
  if (static_cast<std::int64_t>(scratch.size()) < vocab)
    scratch.resize(static_cast<std::size_t>(vocab));
  return scratch.data();
}

// Rows from this many floats up write the gradient with streaming stores: a row that large is
// one of many (a vocabulary), so the gradient outgrows the caches and is not read back soon.
constexpr std::int64_t kStreamFloats = 4096;

CPLAB_AVX2 double avx2_row(const float* z, std::int64_t vocab, std::int64_t target, double scale,
                           float* grad, const float* next) {
  const std::int64_t whole = vocab / 32 * 32, vectors = vocab / 8 * 8;
  // The max, four accumulators deep so the loads are not serialised on one register. The one
  // pass that reads the logits from memory.
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
  std::int64_t v = 0;
  for (; v < whole; v += 32) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(z + v));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(z + v + 8));
    m2 = _mm256_max_ps(m2, _mm256_loadu_ps(z + v + 16));
    m3 = _mm256_max_ps(m3, _mm256_loadu_ps(z + v + 24));
  }
  for (; v < vectors; v += 8) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(z + v));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
  float top = *std::max_element(lanes, lanes + 8);
  for (; v < vocab; ++v) top = std::max(top, z[v]);
  // exp(z - max) into the scratch row, summed per lane in float over at most 1024 elements, then
  // in double (the sum's rounding stays at a few float ulps whatever V is). Meanwhile the next
  // row is fetched into L2, one line per 16 floats, so its max pass finds it there.
  float* e_row = row_scratch(vocab);
  const __m256 shift = _mm256_set1_ps(top);
  const std::int64_t next_lines = next != nullptr ? vectors : 0;
  double sum = 0.0;
  for (std::int64_t block = 0; block < vectors; block += 1024) {
    const std::int64_t end = std::min(vectors, block + 1024);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    std::int64_t i = block;
    for (; i + 16 <= end; i += 16) {
      if (i < next_lines) _mm_prefetch(reinterpret_cast<const char*>(next + i), _MM_HINT_T1);
      const __m256 e0 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(z + i), shift));
      const __m256 e1 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(z + i + 8), shift));
      _mm256_storeu_ps(e_row + i, e0);
      _mm256_storeu_ps(e_row + i + 8, e1);
      s0 = _mm256_add_ps(s0, e0);
      s1 = _mm256_add_ps(s1, e1);
    }
    for (; i < end; i += 8) {
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(z + i), shift));
      _mm256_storeu_ps(e_row + i, e);
      s0 = _mm256_add_ps(s0, e);
    }
    sum += sum_lanes(_mm256_add_ps(s0, s1));
  }
  for (std::int64_t i = vectors; i < vocab; ++i) {
    e_row[i] = std::exp(z[i] - top);
    sum += e_row[i];
  }
  // The gradient, scaled from the scratch row: streamed (from its first 32-byte boundary) for
  // large rows, plain stores for small ones.
  const float factor = static_cast<float>(scale / sum);
  const __m256 factors = _mm256_set1_ps(factor);
  std::int64_t i = 0;
  if (vocab >= kStreamFloats) {
    const auto misalign = reinterpret_cast<std::uintptr_t>(grad) % 32;
    const std::int64_t head =
        misalign % sizeof(float) != 0
            ? vocab  // not float-aligned: no aligned streaming store reaches it
            : static_cast<std::int64_t>((32 - misalign) % 32 / sizeof(float));
    for (; i < head && i < vocab; ++i) grad[i] = e_row[i] * factor;
    for (; i + 8 <= vocab; i += 8)
      _mm256_stream_ps(grad + i, _mm256_mul_ps(_mm256_loadu_ps(e_row + i), factors));
    _mm_sfence();  // the streamed stores are visible before this row's result is used
  } else {
    for (; i + 8 <= vocab; i += 8)
      _mm256_storeu_ps(grad + i, _mm256_mul_ps(_mm256_loadu_ps(e_row + i), factors));
  }
  for (; i < vocab; ++i) grad[i] = e_row[i] * factor;
  return finish_row(z, target, scale, top, sum, grad);
}

CPLAB_AVX2 void avx2_exp(const float* in, std::int64_t n, float* out) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, exp_nonpositive(_mm256_loadu_ps(in + i)));
  if (i < n) {
    float padded[8] = {};
    std::memcpy(padded, in + i, static_cast<std::size_t>(n - i) * sizeof(float));
    _mm256_storeu_ps(padded, exp_nonpositive(_mm256_loadu_ps(padded)));
    std::memcpy(out + i, padded, static_cast<std::size_t>(n - i) * sizeof(float));
  }
}

bool have_avx2() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}
#endif

}  // namespace

double cross_entropy_row(const float* z, std::int64_t vocab, std::int64_t target, double scale,
                         float* grad, const float* next) {
#if defined(__x86_64__)
  if (have_avx2()) return avx2_row(z, vocab, target, scale, grad, next);
#else
  (void)next;
#endif
  return portable_row(z, vocab, target, scale, grad);
}

bool vector_exp_nonpositive(const float* in, std::int64_t n, float* out) {
#if defined(__x86_64__)
  if (have_avx2()) {
    avx2_exp(in, n, out);
    return true;
  }
#endif
  (void)in, (void)n, (void)out;
  return false;
}

}  // namespace cplab::sim
