#pragma once
// One token's cross entropy and its gradient, fused: the row of logits is read from memory once
// (it then stays in this core's cache for the passes over it) and the gradient written once
// (large rows with streaming stores, so memory sees no read of the gradient's old lines).
#include <cstdint>

namespace cplab::sim {

// grad[v] = scale · softmax(z)[v] - scale · [v == target]; returns logsumexp(z) - z[target]
// (unscaled). The target's gradient is computed in double (softmax - 1 cancels when the target
// is the likeliest class). Uses AVX2 + FMA where the CPU has them (checked once at run time),
// else a portable loop; both agree with the double-precision formula to float rounding. `next`,
// when given, is the row of logits the caller passes next: it is fetched into cache meanwhile.
double cross_entropy_row(const float* z, std::int64_t vocab, std::int64_t target, double scale,
                         float* grad, const float* next = nullptr);

// exp(x) for x <= 0 in float, 8 at a time with AVX2 (the kernel's own exp, exposed so that a test
// can compare it with std::exp): out[i] = exp(in[i]). False where the CPU lacks AVX2/FMA.
bool vector_exp_nonpositive(const float* in, std::int64_t n, float* out);

}  // namespace cplab::sim
