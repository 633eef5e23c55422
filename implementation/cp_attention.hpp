#pragma once
// The inputs and outputs of CP attention run by a schedule (SPEC §13), on one rank.
//
// q [B, ℓ, H, d], k and v [B, ℓ, H_kv, d], grad_out [B, ℓ, H, d], all in one dtype (f32, bf16 or
// f16): the rank's local tokens, in its local order. Query head h reads KV head ⌊h·H_kv/H⌋.
// Softmax scale 1/sqrt(d). A query that sees no key outputs 0 with LSE -inf and no gradient.
//
// Precision as production: every block's output is rounded to the input dtype before it is merged;
// the running output, the LSE, the merges and the dK/dV accumulation are f32; out, dQ, dK, dV are
// returned in the input dtype, the LSE in f32.
#include "core/tensor.hpp"

namespace cplab {

struct CpAttentionOutput {
  Tensor out;     // [B, ℓ, H, d], input dtype
  Tensor lse;     // [B, ℓ, H] f32: log Σ exp(scale · q·k) over the keys the query sees
  Tensor grad_q;  // [B, ℓ, H, d], input dtype
  Tensor grad_k;  // [B, ℓ, H_kv, d]: the rank's own keys' gradient, every rank's part summed
  Tensor grad_v;  // [B, ℓ, H_kv, d]
};

}  // namespace cplab
