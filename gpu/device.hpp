#pragma once
// Device memory and streams behind CUDA-free types, so that CPU code (the registry, the CLI, the
// tests that skip) links cplab_gpu without the CUDA headers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;  // what cudaStream_t points to

namespace cplab::gpu {

using Stream = CUstream_st*;

// Usable CUDA devices: 0 when there are none or the runtime cannot talk to a driver.
int device_count();
// Empty when a device is usable; else "no CUDA device" and what the runtime said.
std::string device_unavailable_reason();
void set_device(int device);
int current_device();

// Owns cudaMalloc'd memory on the device that was current when it was made. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

  // Stream-ordered copies; `download` returns once the bytes are on the host.
  void upload(const void* host, std::size_t bytes, Stream stream);
  void download(void* host, std::size_t bytes, Stream stream) const;
  void fill_bytes(int value, Stream stream);  // memset of the whole buffer

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
DeviceBuffer upload_vector(const std::vector<T>& host, Stream stream) {
  DeviceBuffer buffer(host.size() * sizeof(T));
  buffer.upload(host.data(), host.size() * sizeof(T), stream);
  return buffer;
}
template <typename T>
std::vector<T> download_vector(const DeviceBuffer& buffer, std::size_t n, Stream stream) {
  std::vector<T> host(n);
  buffer.download(host.data(), n * sizeof(T), stream);
  return host;
}

// Owns a non-blocking stream on the current device.
class StreamOwner {
 public:
  StreamOwner();
  ~StreamOwner();
  StreamOwner(const StreamOwner&) = delete;
  StreamOwner& operator=(const StreamOwner&) = delete;
  Stream get() const { return stream_; }

 private:
  Stream stream_ = nullptr;
};

void synchronize(Stream stream);
// Raw copies between any two places (host or device) the runtime can tell apart, stream-ordered.
void copy_bytes(void* dst, const void* src, std::size_t bytes, Stream stream);
// The stream's work done, then any error a kernel reported on it raised with `what` in the message.
void check_stream(Stream stream, const char* what);

// A device int64 that kernels lower with atomicMin to report the first bad item they met (the
// launchers cannot see device data). Starts at INT64_MAX, meaning "none".
class ErrorSlot {
 public:
  explicit ErrorSlot(Stream stream);
  std::int64_t* get() const { return slot_.as<std::int64_t>(); }
  // -1 when no kernel reported anything; else the smallest item reported. Synchronises.
  std::int64_t first_bad(Stream stream) const;

 private:
  DeviceBuffer slot_;
};

}  // namespace cplab::gpu
