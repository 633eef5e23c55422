#pragma once
// Device benchmark helpers: CUDA-event timing, the cudaMemcpy baseline, and the no-device skip.
#include <cuda_runtime_api.h>

#include <functional>

#include "bench/bench_support.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"

namespace cplab::bench {

// Seconds the work enqueued by `launch` on `stream` took, between two CUDA events.
inline double time_on_device(gpu::Stream stream, const std::function<void()>& launch) {
  cudaEvent_t start, stop;
  CPLAB_CUDA_CHECK(cudaEventCreate(&start));
  CPLAB_CUDA_CHECK(cudaEventCreate(&stop));
  CPLAB_CUDA_CHECK(cudaEventRecord(start, stream));
  launch();
  CPLAB_CUDA_CHECK(cudaEventRecord(stop, stream));
  CPLAB_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CPLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CPLAB_CUDA_CHECK(cudaEventDestroy(start));
  CPLAB_CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(ms) / 1e3;
}

// GB/s of a device-to-device cudaMemcpy of `bytes`, counted as read + write like the kernels.
inline double cuda_memcpy_gbps(std::int64_t bytes) {
  gpu::DeviceBuffer a(static_cast<std::size_t>(bytes)), b(static_cast<std::size_t>(bytes));
  auto copy = [&] {
    CPLAB_CUDA_CHECK(
        cudaMemcpyAsync(b.get(), a.get(), a.bytes(), cudaMemcpyDeviceToDevice, nullptr));
  };
  time_on_device(nullptr, copy);  // warm-up
  double seconds = 0.0;
  constexpr int kRepeats = 10;
  for (int i = 0; i < kRepeats; ++i) seconds += time_on_device(nullptr, copy);
  return 2.0 * static_cast<double>(bytes) * kRepeats / seconds / 1e9;
}

// True (and the benchmark skipped with the reason) where no device is usable.
inline bool skip_without_device(benchmark::State& state) {
  if (gpu::device_count() > 0) return false;
  state.SkipWithError(("skipped: " + gpu::device_unavailable_reason()).c_str());
  return true;
}

}  // namespace cplab::bench
