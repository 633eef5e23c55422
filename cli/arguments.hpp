#pragma once
// Argument values that every command parses the same way, strictly: digits only where a number is
// asked for (std::stoull would take "-1" as 2^64-1 and " 7" as 7).
#include <cstdint>
#include <string>

namespace cplab::cli {

// "0" to "18446744073709551615"; anything else is a cplab::Error naming the option.
std::uint64_t parse_seed(const std::string& option, const std::string& text);

}  // namespace cplab::cli
