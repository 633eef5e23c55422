#include "gpu/device.hpp"

#include <cuda_runtime_api.h>

#include <limits>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/kernels/launch_check.hpp"

namespace cplab::gpu {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error so later calls start clean
    return 0;
  }
  return n;
}

std::string device_unavailable_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return "no CUDA device (" + cuda_error_text(static_cast<int>(err)) + ")";
  }
  return n > 0 ? std::string() : std::string("no CUDA device");
}

void set_device(int device) { CPLAB_CUDA_CHECK(cudaSetDevice(device)); }

int current_device() {
  int device = 0;
  CPLAB_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CPLAB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  // A destructor cannot throw; a failing cudaFree means the context is already broken, and the
  // next checked call reports it.
  if (ptr_ != nullptr) static_cast<void>(cudaFree(ptr_));
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, Stream stream) {
  CPLAB_LAUNCH_CHECK(bytes <= bytes_, "DeviceBuffer::upload: ", bytes, " bytes into a buffer of ",
                     bytes_);
  if (bytes > 0)
    CPLAB_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, stream));
}

void DeviceBuffer::download(void* host, std::size_t bytes, Stream stream) const {
  CPLAB_LAUNCH_CHECK(bytes <= bytes_, "DeviceBuffer::download: ", bytes, " bytes from a buffer of ",
                     bytes_);
  if (bytes > 0)
    CPLAB_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, stream));
  CPLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void DeviceBuffer::fill_bytes(int value, Stream stream) {
  if (bytes_ > 0) CPLAB_CUDA_CHECK(cudaMemsetAsync(ptr_, value, bytes_, stream));
}

StreamOwner::StreamOwner() {
  CPLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}
StreamOwner::~StreamOwner() {
  if (stream_ != nullptr) static_cast<void>(cudaStreamDestroy(stream_));
}

void synchronize(Stream stream) { CPLAB_CUDA_CHECK(cudaStreamSynchronize(stream)); }

void copy_bytes(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (bytes > 0) CPLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

void check_stream(Stream stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    CPLAB_LAUNCH_CHECK(false, what, ": ", cuda_error_text(static_cast<int>(err)));
  }
}

ErrorSlot::ErrorSlot(Stream stream) : slot_(sizeof(std::int64_t)) {
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  slot_.upload(&none, sizeof none, stream);
}

std::int64_t ErrorSlot::first_bad(Stream stream) const {
  std::int64_t value = 0;
  slot_.download(&value, sizeof value, stream);
  return value == std::numeric_limits<std::int64_t>::max() ? -1 : value;
}

}  // namespace cplab::gpu
