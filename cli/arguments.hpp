#pragma once
// Argument values that every command parses the same way, strictly: digits only where a number is
// asked for (std::stoull would take "-1" as 2^64-1 and " 7" as 7).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace cplab::cli {

// "0" to "18446744073709551615"; anything else is a cplab::Error naming the option.
std::uint64_t parse_seed(const std::string& option, const std::string& text);

// "-9223372036854775808" to "9223372036854775807", digits with an optional '-'; anything else
// (CLI11 saturates an out-of-range integer to the nearest bound) is a cplab::Error naming the
// option.
std::int64_t parse_int64(const std::string& option, const std::string& text);

// Every integer option of `app` and its subcommands takes plain decimal digits only (an empty
// value, "0x10" or "1'000" is refused, as every other number of cplab's is) and refuses a value
// past its type's range with the value as typed (CLI11 would saturate it to the bound).
void refuse_non_decimal_integers(CLI::App& app);

// A number in [lo, hi] and finite: CLI::Range lets NaN through (no comparison with NaN is true).
CLI::Validator finite_range(double lo, double hi);

}  // namespace cplab::cli
