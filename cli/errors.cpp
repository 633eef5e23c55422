#include "cli/errors.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <system_error>
#include <typeinfo>

#include "core/error.hpp"
#include "core/untrusted_text.hpp"

namespace cplab::cli {
namespace {

void print_line(const char* kind, std::string_view message) {
  std::fprintf(stderr, "cplab: %s: %s\n", kind, escape_untrusted(message).c_str());
}

}  // namespace

int report_exception(std::exception_ptr error, bool verbose) {
  try {
    std::rethrow_exception(error);
  } catch (const CLI::ParseError& e) {
    print_line("usage", e.what());
    return kUsageError;
  } catch (const DetailedError& e) {
    print_line("error", e.what());
    if (verbose) std::fprintf(stderr, "%s\n", e.detail().c_str());
    return kUsageError;
  } catch (const Error& e) {
    print_line("error", e.what());
    return kUsageError;
  } catch (const ResourceError& e) {
    print_line("out of resources", e.what());
    return kUsageError;
  } catch (const std::bad_alloc& e) {
    print_line("out of resources",
               "out of memory (std::bad_alloc); the input needs more memory than this machine "
               "gives; see the limits in the README");
    return kUsageError;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path given on the command line (or one inside it) that cannot be read, made or renamed:
    // the input's fault or the machine's, never a bug of cplab.
    print_line("error", e.what());
    return kUsageError;
  } catch (const std::system_error& e) {
    // fmt::print throws when a write to stdout fails: the result could not be delivered, which
    // is the machine's or the caller's doing (a full disk), not a bug of cplab.
    if (std::ferror(stdout) != 0) {
      print_line("error", fmt::format("cannot write the output: {}", e.code().message()));
      return kUsageError;
    }
    if (e.code() == std::errc::resource_unavailable_try_again) {
      print_line("out of resources", fmt::format("the system refused a thread: {}", e.what()));
      return kUsageError;
    }
    print_line(
        "internal error",
        fmt::format("{} (a bug of cplab: please report it with the command line)", e.what()));
    if (verbose) std::fprintf(stderr, "exception type: %s\n", typeid(e).name());
    return kInternalError;
  } catch (const std::exception& e) {
    print_line(
        "internal error",
        fmt::format("{} (a bug of cplab: please report it with the command line)", e.what()));
    if (verbose) std::fprintf(stderr, "exception type: %s\n", typeid(e).name());
    return kInternalError;
  } catch (...) {
    print_line("internal error",
               "an unknown exception (a bug of cplab: please report it with the command line)");
    return kInternalError;
  }
}

int run_guarded(const std::function<int()>& body, const bool& verbose) {
  try {
    return body();
  } catch (...) {
    return report_exception(std::current_exception(), verbose);
  }
}

void silence_stdout() {
  std::fflush(stdout);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) std::fclose(stdout);
}

int finish_output(int status) {
  if (status == kUsageError || status == kInternalError || status >= 128) return status;
  std::cout.flush();
  errno = 0;
  int failure = std::fflush(stdout) != 0 ? errno : 0;
  const bool failed = failure != 0 || std::ferror(stdout) != 0 || std::cout.bad();
  errno = 0;
  if (std::fclose(stdout) != 0 && failure == 0) failure = errno;
  if (!failed && failure == 0) return status;
  print_line("error",
             fmt::format("cannot write the output: {}",
                         failure != 0 ? std::strerror(failure) : "a write to stdout failed"));
  return kUsageError;
}

namespace {
bool verbose_on = false;  // the command line's --verbose: one process, one command
}  // namespace

void set_verbose(bool on) { verbose_on = on; }

void verbose_note(std::string_view line) {
  if (verbose_on) std::fprintf(stderr, "cplab: note: %s\n", escape_untrusted(line).c_str());
}

void note_skipped_entries(const std::string& path,
                          const std::map<std::string, std::string>& skipped) {
  if (skipped.empty()) return;
  std::string list;
  for (const auto& [name, kind] : skipped) {
    list += (list.empty() ? "" : ", ") + name + " (" + kind + ")";
  }
  verbose_note(fmt::format("{}: skipped {} non-tensor entr{}: {}", path, skipped.size(),
                           skipped.size() == 1 ? "y" : "ies", list));
}

}  // namespace cplab::cli
