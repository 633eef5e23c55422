// Reading a sweep report from disk for --merge. The path comes from the user and may name
// anything: a FIFO with no writer (an open() for reading would wait for one forever), a device, a
// folder. The file is opened without blocking and judged by what was opened (fstat of the open
// descriptor, not a stat of the name before it, which a rename could make stale), and only a
// regular file is read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; O_NOCTTY: a
  // terminal named here never becomes this process's controlling one.
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  CPLAB_CHECK(fd.get() >= 0, "cannot read {} {}: {}", what, path.string(), std::strerror(errno));
  struct stat info {};
  CPLAB_CHECK(::fstat(fd.get(), &info) == 0, "cannot read {} {}: {}", what, path.string(),
              std::strerror(errno));
  CPLAB_CHECK(S_ISREG(info.st_mode), "{} {} is {}, not a regular file: refused", what,
              path.string(), file_kind(info.st_mode));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      CPLAB_FAIL("cannot read {} {}: {}", what, path.string(), std::strerror(errno));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

properties::SweepReport read_json_file(const std::filesystem::path& path) {
  const std::string text = read_regular_file(path, "sweep report");
  try {
    return from_json(text);
  } catch (const Error& e) {
    CPLAB_FAIL("{}: {}", path.string(), e.what());
  }
}

properties::SweepReport read_report(const std::filesystem::path& path) {
  // A folder is a sweep's --out: its report.json. Asking is a stat, which never blocks.
  std::error_code error;
  const bool folder = std::filesystem::is_directory(path, error);
  return read_json_file(folder ? path / "report.json" : path);
}

}  // namespace cplab::reports
