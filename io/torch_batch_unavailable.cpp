// Built instead of torch_batch.cpp when libtorch is off: the verbs exist and say why they fail.
#include "io/torch_batch.hpp"

namespace cplab::io {

bool torch_available() { return false; }

Batch load_torch_batch(const std::string& path, SkippedEntries*) {
  CPLAB_FAIL(
      "cannot read '{}': this cplab was built without libtorch (configure with -DCPLAB_TORCH=ON)",
      path);
}

void save_torch_batch(const Batch&, const std::string& path) {
  CPLAB_FAIL(
      "cannot write '{}': this cplab was built without libtorch (configure with -DCPLAB_TORCH=ON)",
      path);
}

}  // namespace cplab::io
