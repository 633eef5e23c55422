#include "gpu/cuda_check.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu {

std::string cuda_error_text(int code) {
  const auto err = static_cast<cudaError_t>(code);
  return detail::concat(cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

void check_cuda(int code, const char* call, const char* file, int line) {
  if (code == 0) return;
  throw_error(file, line, detail::concat(call, " failed: ", cuda_error_text(code)));
}

void check_nccl(int code, const char* call, const char* file, int line) {
  if (code == 0) return;
  // ncclGetLastError(nullptr) holds the detail NCCL logged for the failing call (if any).
  const char* last = ncclGetLastError(nullptr);
  throw_error(file, line,
              detail::concat(call, " failed: NCCL error ", code, ": ",
                             ncclGetErrorString(static_cast<ncclResult_t>(code)),
                             (last && *last) ? " (" : "", (last && *last) ? last : "",
                             (last && *last) ? ")" : ""));
}

}  // namespace cplab::gpu
