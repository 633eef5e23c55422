#pragma once
// Device tests skip where no device is usable and run everything where one is: nothing in a test
// body is conditional on the device beyond this one SetUp.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/device.hpp"

namespace cplab::gputest {

// The reason starts "no CUDA device", so the skip reads "skipped: no CUDA device (...)".
#define CPLAB_REQUIRE_DEVICE()                                                  \
  do {                                                                          \
    if (::cplab::gpu::device_count() == 0)                                      \
      GTEST_SKIP() << "skipped: " << ::cplab::gpu::device_unavailable_reason(); \
  } while (0)

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { CPLAB_REQUIRE_DEVICE(); }
};

template <typename P>
class GpuParamTest : public ::testing::TestWithParam<P> {
 protected:
  void SetUp() override { CPLAB_REQUIRE_DEVICE(); }
};

// Host bytes of a device buffer.
template <typename T>
std::vector<T> fetch(const gpu::DeviceBuffer& buffer, std::size_t n) {
  return gpu::download_vector<T>(buffer, n, nullptr);
}

}  // namespace cplab::gputest
