#pragma once
// The `gpu` implementation under test: the rank-local verbs of SPEC §4-§7 with device buffers,
// CUDA kernels and device collectives. Host tensors cross the Implementation interface; each call
// uploads, runs its kernels and collectives, and downloads. CUDA-free, so the registry links it.
#include <memory>

#include "gpu/comm/device_comm.hpp"
#include "implementation/implementation.hpp"

namespace cplab::gpu {

// Named "gpu" (device_sim: C virtual ranks on one GPU), "gpu-nccl" or "gpu-host" (staging through
// the caller's comm). available() is false, with why_unavailable() "no CUDA device ...", where no
// device can be used; nccl also needs as many devices as ranks, checked when a group starts.
std::unique_ptr<Implementation> make_gpu_implementation(GpuCommKind kind = GpuCommKind::device_sim);

}  // namespace cplab::gpu
