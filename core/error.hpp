#pragma once
// One error type for every invalid input and every failed check. Only the CLI catches it.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace cplab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An Error whose cause came with more than one line (a libtorch message and its backtrace):
// what() is the one line every user sees, detail() the rest (`cplab --verbose` prints it).
class DetailedError : public Error {
 public:
  DetailedError(const std::string& line, std::string detail)
      : Error(line), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// The machine ran out of something the input needed (memory, threads): neither a bad input nor a
// bug, and never a failed check. Raised where std::bad_alloc or a failed thread start is caught.
class ResourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rank-local code sets this for its thread (ThreadComm does it for every rank it runs), so that
// every error raised on a rank says which one: "rank 2/4: ...". -1 means "not on a rank".
struct RankTag {
  int rank = -1;
  int size = 0;
};
RankTag& current_rank_tag();

class ScopedRankTag {
 public:
  ScopedRankTag(int rank, int size) : saved_(current_rank_tag()) {
    current_rank_tag() = {rank, size};
  }
  ~ScopedRankTag() { current_rank_tag() = saved_; }
  ScopedRankTag(const ScopedRankTag&) = delete;
  ScopedRankTag& operator=(const ScopedRankTag&) = delete;

 private:
  RankTag saved_;
};

[[noreturn]] void throw_error(const char* file, int line, const std::string& message);

}  // namespace cplab

// CPLAB_CHECK(cond, "fmt {}", args...): throws cplab::Error("file:line: [rank r/C: ]message").
#define CPLAB_CHECK(cond, ...)                                                       \
  do {                                                                               \
    if (!(cond)) ::cplab::throw_error(__FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
#define CPLAB_FAIL(...) ::cplab::throw_error(__FILE__, __LINE__, fmt::format(__VA_ARGS__))
