// Built instead of torch_tensors.cpp when libtorch is off: the functions exist and say why they
// fail.
#include "core/error.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::io {

TensorFile load_torch_tensors(const std::string& path) {
  CPLAB_FAIL(
      "cannot read '{}': this cplab was built without libtorch (configure with "
      "-DCPLAB_TORCH=ON)",
      path);
}

void save_torch_tensors(const std::map<std::string, Tensor>&, const std::string& path) {
  CPLAB_FAIL(
      "cannot write '{}': this cplab was built without libtorch (configure with "
      "-DCPLAB_TORCH=ON)",
      path);
}

void save_torch_dict(const std::map<std::string, DictEntry>&, const std::string& path) {
  CPLAB_FAIL(
      "cannot write '{}': this cplab was built without libtorch (configure with "
      "-DCPLAB_TORCH=ON)",
      path);
}

}  // namespace cplab::io
