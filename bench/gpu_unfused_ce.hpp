#pragma once
// The unfused cross entropy that the fused kernel is measured against: what a framework's
// log_softmax + nll_loss forward and backward amount to, in two kernels with the logits read
// from device memory by each (pass 1: per row, log-sum-exp and the loss; pass 2: per element,
// the gradient (softmax - onehot) · scale). Same arguments and outputs as gpu::fused_shifted_ce.
#include "gpu/kernels/loss_shifted_ce.hpp"

namespace cplab::bench {

// `lse` is device scratch of rows floats.
void unfused_shifted_ce(const gpu::FusedCe& args, float* lse, gpu::Stream stream);

}  // namespace cplab::bench
