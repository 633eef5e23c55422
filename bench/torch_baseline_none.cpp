#include "bench/torch_baseline.hpp"
#include "reference/types/error.hpp"

namespace cplab::bench {

bool torch_available() { return false; }

TorchCe torch_cross_entropy(const float*, const std::int64_t*, std::int64_t, std::int64_t, int,
                            int) {
  CPLAB_FAIL("this build has no libtorch (configure with CPLAB_TORCH=ON)");
}

}  // namespace cplab::bench
