#pragma once
// CUDA and NCCL failures become cplab::Error naming the call, the file and line, and the error's
// name and text. The header needs no CUDA headers: the status travels as an int.
#include <string>

namespace cplab::gpu {

// Throws when code is not cudaSuccess / ncclSuccess (0).
void check_cuda(int code, const char* call, const char* file, int line);
void check_nccl(int code, const char* call, const char* file, int line);
// "cudaErrorInvalidValue: invalid argument"; exposed for messages that are not thrown at once.
std::string cuda_error_text(int code);

}  // namespace cplab::gpu

#define CPLAB_CUDA_CHECK(call) \
  ::cplab::gpu::check_cuda(static_cast<int>(call), #call, __FILE__, __LINE__)
#define CPLAB_NCCL_CHECK(call) \
  ::cplab::gpu::check_nccl(static_cast<int>(call), #call, __FILE__, __LINE__)
