#pragma once
// The running output of CP attention (SPEC §13.3): block outputs merged into an f32 running output
// by their log-sum-exps, and the casts at the end of a call. The merge of (o, l) with a block's
// (o_b, l_b) is  l' = max + log1p(exp(min - max)),  o' = o·exp(l - l') + o_b·exp(l_b - l'):  every
// exponent is ≤ 0, so nothing overflows however large the scores; a -inf side contributes
// nothing, and two -inf sides leave the query at 0 with LSE -inf.
#include <cstdint>

#include "gpu/device.hpp"
#include "gpu/host/attention_launch.hpp"

namespace cplab::gpu {

// One step's merge, as gpu/host/attention_plan.hpp's StepLaunch lays it out on the device.
struct LseMerge {
  AttnElem elem = AttnElem::f32;  // the block outputs'
  std::int64_t heads = 0, head_dim = 0;
  std::int64_t targets = 0;               // query tokens the step touches
  const std::int64_t* tokens = nullptr;   // [targets]
  const std::int64_t* offsets = nullptr;  // [targets + 1]
  const std::int64_t* rows = nullptr;     // block-output rows, per target in block order
  const void* block_out = nullptr;        // [out rows][H][d], dtype
  const float* block_lse = nullptr;       // [out rows][H]
};

// out [tokens][H][d] and lse [tokens][H], f32, updated in place for the merge's targets.
void merge_block_outputs(const LseMerge& m, float* out, float* lse, Stream stream);

// The running state before the first step: out 0, LSE -inf.
void reset_running_output(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                          float* out, float* lse, Stream stream);

// dst[i] = src[i] rounded to `elem` (f32, bf16 or f16), nearest even.
void cast_from_f32(const float* src, void* dst, AttnElem elem, std::int64_t n, Stream stream);

}  // namespace cplab::gpu
