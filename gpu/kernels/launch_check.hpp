#pragma once
// Precondition checks for launchers in .cu files. nvcc cannot compile fmt's compile-time format
// strings, so .cu files stay free of fmt and build their messages with a string stream instead;
// the error is the project's one (cplab::Error with file:line and the rank tag).
#include <sstream>
#include <string>

namespace cplab {
[[noreturn]] void throw_error(const char* file, int line, const std::string& message);
}

namespace cplab::gpu::detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace cplab::gpu::detail

// CPLAB_LAUNCH_CHECK(cond, "copy_tokens: width ", w, " does not divide ", n);
#define CPLAB_LAUNCH_CHECK(cond, ...)                                                      \
  do {                                                                                     \
    if (!(cond))                                                                           \
      ::cplab::throw_error(__FILE__, __LINE__, ::cplab::gpu::detail::concat(__VA_ARGS__)); \
  } while (0)
