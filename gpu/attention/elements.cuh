#pragma once
// Device element types of the attention kernels and the one dtype dispatch of their launchers:
// inputs are read as f32 and results rounded back to nearest even, as the host's bf16/f16 do.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu/host/attention_launch.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu::attn {

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float load(const __half* p) { return __half2float(*p); }

__device__ __forceinline__ void store(float* p, float x) { *p = x; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }
__device__ __forceinline__ void store(__half* p, float x) { *p = __float2half_rn(x); }

// f(element{}) with the device element type of `elem`; `what` names the launcher in the error.
template <typename F>
void visit_element(AttnElem elem, const char* what, F&& f) {
  switch (elem) {
    case AttnElem::f32:
      return f(float{});
    case AttnElem::bf16:
      return f(__nv_bfloat16{});
    case AttnElem::f16:
      return f(__half{});
  }
  CPLAB_LAUNCH_CHECK(false, what, ": element type ", static_cast<int>(elem),
                     " is not an attention dtype; supported: f32, bf16, f16");
}

}  // namespace cplab::gpu::attn
