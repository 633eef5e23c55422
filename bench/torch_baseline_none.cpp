#include "bench/torch_baseline.hpp"
#include "core/error.hpp"

namespace cplab::bench {

bool torch_available() { return false; }

struct TorchCrossEntropy::State {};

TorchCrossEntropy::TorchCrossEntropy(const float*, const std::int64_t*, std::int64_t, std::int64_t,
                                     int) {
  CPLAB_FAIL("this build has no libtorch (configure with CPLAB_TORCH=ON)");
}

TorchCrossEntropy::~TorchCrossEntropy() = default;
TorchCeRun TorchCrossEntropy::run() { return {}; }
double TorchCrossEntropy::loss() const { return 0.0; }
std::vector<float> TorchCrossEntropy::grad() const { return {}; }

struct TorchAttention::State {};

TorchAttention::TorchAttention(const float*, const float*, const float*, const float*, std::int64_t,
                               std::int64_t, std::int64_t, int) {
  CPLAB_FAIL("this build has no libtorch (configure with CPLAB_TORCH=ON)");
}

TorchAttention::~TorchAttention() = default;
TorchCeRun TorchAttention::run() { return {}; }
std::vector<float> TorchAttention::out() const { return {}; }
std::vector<float> TorchAttention::grad(int) const { return {}; }

}  // namespace cplab::bench
