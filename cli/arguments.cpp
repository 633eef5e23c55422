#include "cli/arguments.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "reference/types/error.hpp"

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
