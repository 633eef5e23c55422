#include "cli/arguments.hpp"

#include <charconv>

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

}  // namespace cplab::cli
