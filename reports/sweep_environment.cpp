#include "reports/sweep_environment.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>

#include "core/source_dir.hpp"

#ifdef CPLAB_WITH_GPU
#include "gpu/device.hpp"
#endif

namespace cplab::reports {
namespace {

// The first line a shell command prints, "" when it fails.
std::string first_line(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::array<char, 256> buffer{};
  std::string line;
  if (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
    line = buffer.data();
  const int status = ::pclose(pipe);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return status == 0 ? line : "";
}

}  // namespace

Environment sweep_environment() {
  Environment env;
  const std::string git = fmt::format("git -C '{}' ", cplab::source_dir());
  env.commit = first_line(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (env.commit.empty()) {
    env.commit = "unknown (not a git checkout)";
  } else if (!first_line(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) {
    env.commit += " (modified)";
  }
#if defined(__clang__)
  env.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  env.compiler = fmt::format("GCC {}", __VERSION__);
#else
  env.compiler = "unknown";
#endif
#ifdef CPLAB_WITH_GPU
  env.cuda = fmt::format("CUDA {}", CPLAB_CUDA_VERSION);
  const int devices = gpu::device_count();
  env.gpu = devices > 0 ? fmt::format("{} CUDA device{}", devices, devices == 1 ? "" : "s")
                        : gpu::device_unavailable_reason();
#else
  env.cuda = "built without CUDA";
  env.gpu = "none (built without CUDA)";
#endif
  return env;
}

}  // namespace cplab::reports
