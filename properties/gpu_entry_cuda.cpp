// The GPU entries of a build with CUDA: gpu/'s factory, one entry per way of connecting the ranks.
// Without a usable device the implementation says so (available() false) and the job is skipped.
#include "gpu/implementation.hpp"
#include "properties/implementation_registry.hpp"

namespace cplab::properties {

std::vector<ImplementationInfo> gpu_entries() {
  return {
      {.name = "gpu",
       .summary = "CUDA kernels, C virtual ranks on one device (device-sim comm)",
       .make = [] { return gpu::make_gpu_implementation(gpu::GpuCommKind::device_sim); }},
      {.name = "gpu-nccl",
       .summary = "CUDA kernels, NCCL collectives, one device per rank",
       .in_default_sweep = false,
       .make = [] { return gpu::make_gpu_implementation(gpu::GpuCommKind::nccl); }},
      {.name = "gpu-host",
       .summary = "CUDA kernels, collectives staged through the host comm",
       .in_default_sweep = false,
       .make = [] { return gpu::make_gpu_implementation(gpu::GpuCommKind::host); }},
  };
}

}  // namespace cplab::properties
