#pragma once
// Every file a command writes is written whole or not at all: into a temporary file beside the
// target (same file system), then renamed over it. A failed write, a full disk or a stop by
// SIGINT, SIGTERM or SIGHUP while the bytes go out leaves neither half of a file nor the
// temporary behind: the temporary is removed on every path out, a signal's included (the handler
// that removes it then ends the process by that signal, as it would have). A command that handles
// the signals itself (the sweep, which stops between steps and writes its report) keeps its own
// handler. A path that exists and is no regular file (/dev/stdout, a FIFO) is written in place; a
// folder is refused.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace cplab {

// `fill` writes the contents; any cplab::Error it throws leaves no file either.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& fill);
void write_output_file(const std::string& path, std::string_view text);

}  // namespace cplab
