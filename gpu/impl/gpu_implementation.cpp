#include "gpu/impl/gpu_implementation.hpp"

#include "gpu/implementation.hpp"

namespace cplab::gpu {

std::string GpuImplementation::name() const {
  switch (kind_) {
    case GpuCommKind::device_sim:
      return "gpu";
    case GpuCommKind::nccl:
      return "gpu-nccl";
    case GpuCommKind::host:
      return "gpu-host";
  }
  return "gpu";
}

bool GpuImplementation::available() const { return device_count() > 0; }

std::string GpuImplementation::why_unavailable() const { return device_unavailable_reason(); }

std::unique_ptr<Implementation> make_gpu_implementation(GpuCommKind kind) {
  return std::make_unique<GpuImplementation>(kind);
}

}  // namespace cplab::gpu
