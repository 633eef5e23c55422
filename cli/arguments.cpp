#include "cli/arguments.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <type_traits>

#include "core/error.hpp"

namespace cplab::cli {

std::uint64_t parse_seed(const std::string& option, const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  CPLAB_CHECK(!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
                  error == std::errc() && end == text.data() + text.size(),
              "{} '{}' is not an unsigned 64-bit integer (0 to 18446744073709551615)", option,
              text);
  return value;
}

std::int64_t parse_int64(const std::string& option, const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
  CPLAB_CHECK(text.size() > sign &&
                  text.find_first_not_of("0123456789", sign) == std::string::npos &&
                  error == std::errc() && end == text.data() + text.size(),
              "{} '{}' is not a 64-bit integer (-9223372036854775808 to 9223372036854775807)",
              option, text);
  return value;
}

namespace {

// An integer option's text must be plain decimal digits, with a '-' for signed types: CLI11 alone
// also takes an empty text (as 0), hexadecimal, octal and binary prefixes ("0x10") and digit
// separators, which no other number of cplab's accepts. Digits that do not fit are the only texts
// CLI11 saturates: they are refused too, with the range.
template <typename T>
std::string not_a_decimal_integer(const std::string& text) {
  const std::size_t sign = std::is_signed_v<T> && !text.empty() && text[0] == '-' ? 1 : 0;
  const char* kind = std::is_signed_v<T> ? "" : "unsigned ";
  if (text.size() <= sign || text.find_first_not_of("0123456789", sign) != std::string::npos)
    return fmt::format("Value '{}' is not a decimal {}integer", text, kind);
  T value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc::result_out_of_range) return {};
  return fmt::format("Value {} is outside the range of a {}-bit {}integer", text, 8 * sizeof(T),
                     kind);
}

}  // namespace

void refuse_non_decimal_integers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "INT")
      option->check(CLI::Validator(not_a_decimal_integer<std::int64_t>, ""));
    else if (type == "UINT")
      option->check(CLI::Validator(not_a_decimal_integer<std::uint64_t>, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_non_decimal_integers(*sub);
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double value = 0.0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value >= lo &&
            value <= hi)
          return {};
        return fmt::format("Value {} not a finite number in range {} to {}", text, lo, hi);
      },
      fmt::format("FINITE in [{} - {}]", lo, hi));
}

}  // namespace cplab::cli
