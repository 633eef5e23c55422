#pragma once
// Text from a file, an argument or a user's sharder, made safe to print: one printable line that
// can never add a line or a terminal escape to stderr, a report or a page. Every front end (the
// CLI's error line, the Python module's cplab.Error, the bench history page) escapes through it,
// so one message reads the same wherever it is shown.
#include <cstddef>
#include <string>
#include <string_view>

namespace cplab {

// `text` as one printable line: bytes < 0x20, 0x7f and invalid UTF-8 become \xNN; longer than
// max_bytes, it is cut with " …(N more bytes)".
std::string escape_untrusted(std::string_view text, std::size_t max_bytes = 1000);

}  // namespace cplab
