// Case strings (`cplab replay '<case>'`) from the fuzzer: parse_case returns a valid case or throws
// cplab::Error; a parsed case prints to a line that parses back to the same case.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "properties/case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cplab::properties::Case c;
  try {
    c = cplab::properties::parse_case(text);
  } catch (const cplab::Error&) {
    return 0;
  }
  const std::string printed = cplab::properties::print_case(c);
  try {
    if (!(cplab::properties::parse_case(printed) == c)) __builtin_trap();  // round trip broken
  } catch (const cplab::Error&) {
    __builtin_trap();  // a case it printed, it must read back
  }
  return 0;
}
