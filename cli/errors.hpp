#pragma once
// The exit-status contract of every cplab command, and the one place that turns an exception into
// that status and one line on stderr:
//   0 ok · 1 a property or check failed · 2 bad input or usage (cplab::Error, CLI11 parse errors,
//   resource exhaustion: the input needs more than this machine has) · 3 an internal error (any
//   other exception: a bug of cplab, with a hint to report it).
// Messages are escaped (control bytes and invalid UTF-8 as \xNN) and shortened, so that text from
// a file or an argument can never add a line or a terminal escape to stderr.
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/untrusted_text.hpp"  // escape_untrusted, which the messages go through

namespace cplab::cli {

inline constexpr int kOk = 0;
inline constexpr int kCheckFailed = 1;
inline constexpr int kUsageError = 2;
inline constexpr int kInternalError = 3;

// Prints "cplab: <kind>: <message>" for the exception and returns its exit status. With verbose,
// the exception's type and any detail it carries follow on further lines.
int report_exception(std::exception_ptr error, bool verbose);

// Runs body and maps whatever it throws through report_exception; verbose is read after body ran
// (the flag is parsed inside it).
int run_guarded(const std::function<int()>& body, const bool& verbose);

// Delivers what the command printed: flushes and closes stdout, and returns `status`, or exit 2
// with one line ("cannot write the output: No space left on device") when the result could not
// be written (a full disk, /dev/full, a closed descriptor). stdio buffers, so such a failure is
// seen at the final flush, not at the first print. A status that already printed its error line
// (2, 3) or a stop by a signal (128 + n) is returned as it is.
int finish_output(int status);

// Sends stdout to /dev/null: the processes of an MPI job other than rank 0 stay quiet.
void silence_stdout();

// --verbose, set by main once the arguments are parsed: notes about what a command read
// differently from the file (entries it skipped) go to stderr only then, one escaped line each.
void set_verbose(bool on);
void verbose_note(std::string_view line);
// "FILE: skipped non-tensor entries a (str), b (int)" for what a torch.save reader skipped.
void note_skipped_entries(const std::string& path,
                          const std::map<std::string, std::string>& skipped);

}  // namespace cplab::cli
