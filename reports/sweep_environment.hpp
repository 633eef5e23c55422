#pragma once
// Where a sweep ran, for its page: the commit of the source tree, the compiler, CUDA and the GPU.
#include <string>

namespace cplab::reports {

struct Environment {
  std::string commit;    // short hash (+ " (modified)"), or "unknown" outside a git checkout
  std::string compiler;  // of this build
  std::string cuda;      // toolkit version of this build, or "built without CUDA"
  std::string gpu;       // usable devices, or why there are none
};

Environment sweep_environment();

}  // namespace cplab::reports
