#pragma once
// The arithmetic of one schedule block (SPEC §13.3), per head, as production's kernels do it: the
// forward of a block with its log-sum-exp, the stable merge of a block into the running output,
// and the backward of a block against the final LSE. Operands are f32 host arrays whose values
// are those of the input dtype; strides are in floats between consecutive tokens, so one head of
// a [tokens, heads, d] buffer is a strided view.
#include <cstdint>

#include "attention/block_mask.hpp"
#include "core/dtype.hpp"

namespace cplab::sim {

// A block's queries and keys for one query head and the KV head it reads.
struct BlockOperands {
  const float* q = nullptr;  // query i at q + i·q_stride, d elements
  const float* k = nullptr;  // key j at k + j·kv_stride
  const float* v = nullptr;
  std::int64_t q_stride = 0, kv_stride = 0;
  std::int64_t queries = 0, keys = 0, d = 0;
  int mask = kMaskFull;  // the block's mask kind and causal diagonal (block_mask.hpp)
  std::int64_t diagonal = 0;
  const TokenFacts* q_facts = nullptr;  // per query and per key: what a per-token block reads
  const TokenFacts* k_facts = nullptr;
  MaskRule rule{};     // the row's mask, for per-token blocks
  float scale = 1.0f;  // softmax scale
};

// The block's output and LSE. out[i] (at out + i·out_stride, d elements) is rounded to `dtype`
// (the input dtype, as a kernel writes it); lse[i·lse_stride] is f32. A query that sees no key of
// the block gets out 0 and lse -inf.
void block_forward(const BlockOperands& b, DType dtype, float* out, std::int64_t out_stride,
                   float* lse, std::int64_t lse_stride);

// Merges one row of a block (out_b, lse_b) into the running row (out, lse), in f32:
// lse' = max + log1p(exp(min - max)), out' = out·exp(lse - lse') + out_b·exp(lse_b - lse').
// Every exponent is <= 0; a side at -inf contributes nothing; both at -inf leave (0, -inf).
void merge_row(float* out, float& lse, const float* out_b, float lse_b, std::int64_t d);

// The backward of one block against the final output's statistics: P = exp(scale·S - lse)
// (lse[i·lse_stride], the final LSE), dP = dO·Vᵀ, dS = P∘(dP - delta) (delta[i·lse_stride] =
// rowsum(dO∘O) of the final output), then dq += scale·dS·K, dk += scale·dSᵀ·Q, dv += Pᵀ·dO, all
// in f32. dout and dq stride like q, dk and dv like k.
struct BlockGradients {
  const float* dout = nullptr;
  const float* lse = nullptr;
  const float* delta = nullptr;
  std::int64_t lse_stride = 0;
  float* dq = nullptr;
  float* dk = nullptr;
  float* dv = nullptr;
};
void block_backward(const BlockOperands& b, const BlockGradients& g);

// Unit roundoff of a floating dtype (f32 2^-24, bf16 2^-8, f16 2^-11).
double unit_roundoff(DType dtype);
// v rounded to `dtype` (round to nearest even) and back to f32.
float round_to(DType dtype, float v);

}  // namespace cplab::sim
