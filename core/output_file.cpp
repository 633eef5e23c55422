#include "core/output_file.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/error.hpp"

namespace cplab {
namespace {

namespace fs = std::filesystem;

// The temporary being written, for the signal handler: a plain buffer (async-signal-safe to read)
// and whether it holds a path to remove.
char g_temp[PATH_MAX];
volatile std::sig_atomic_t g_armed = 0;

extern "C" void remove_temp_then_stop(int sig) {
  if (g_armed != 0) ::unlink(g_temp);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// While a temporary exists: the stop signals that would end the process where they stand (their
// default action) remove it first. Handlers a command installed itself are left as they are.
class TempGuard {
 public:
  explicit TempGuard(const fs::path& temp) {
    const std::string text = temp.string();
    CPLAB_CHECK(text.size() < sizeof g_temp, "cannot write '{}': the path is too long", text);
    std::memcpy(g_temp, text.c_str(), text.size() + 1);
    g_armed = 1;
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      struct sigaction now {};
      if (::sigaction(kStopSignals[i], nullptr, &now) != 0 || now.sa_handler != SIG_DFL) continue;
      struct sigaction ours {};
      ours.sa_handler = remove_temp_then_stop;
      sigemptyset(&ours.sa_mask);
      replaced_[i] = ::sigaction(kStopSignals[i], &ours, &saved_[i]) == 0;
    }
  }
  ~TempGuard() {
    g_armed = 0;
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
      if (replaced_[i]) ::sigaction(kStopSignals[i], &saved_[i], nullptr);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;

 private:
  struct sigaction saved_[std::size(kStopSignals)]{};
  bool replaced_[std::size(kStopSignals)]{};
};

std::mutex& writer_mutex() {
  static std::mutex mutex;  // one temporary at a time: the handler knows one path
  return mutex;
}

}  // namespace

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  std::error_code error;
  CPLAB_CHECK(!fs::is_directory(fs::status(path, error)), "cannot write '{}': it is a folder",
              path);
  // A link is written through, never replaced (/dev/stdout is one), and so is a device or a FIFO.
  const fs::file_status own = fs::symlink_status(path, error);
  if (fs::exists(own) && !fs::is_regular_file(own)) {
    std::ofstream out(path, std::ios::binary);
    CPLAB_CHECK(out.good(), "cannot write '{}': {}", path, std::strerror(errno));
    fill(out);
    out.flush();
    CPLAB_CHECK(out.good(), "short write to '{}' (disk full?)", path);
    return;
  }
  const fs::path target(path);
  const fs::path temp = target.parent_path() /
                        ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
  const std::lock_guard<std::mutex> lock(writer_mutex());
  const TempGuard guard(temp);
  try {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    CPLAB_CHECK(out.good(), "cannot write '{}': {}", path, std::strerror(errno));
    fill(out);
    out.close();  // flushes: a failed write of the last bytes shows here too
    CPLAB_CHECK(!out.fail(), "short write to '{}' (disk full?)", path);
    fs::rename(temp, target, error);
    CPLAB_CHECK(!error, "cannot write '{}': {}", path, error.message());
  } catch (...) {
    fs::remove(temp, error);
    throw;
  }
}

void write_output_file(const std::string& path, std::string_view text) {
  write_output_file(path, [text](std::ostream& out) { out << text; });
}

}  // namespace cplab
