// Sweep reports from the fuzzer (up to four, separated by a NUL byte), read and merged as
// `cplab sweep --merge` does: each is refused with cplab::Error or read; the readable ones merge
// or are refused; a merged report writes as JSON, JUnit and Markdown and reads back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<cplab::properties::SweepReport> reports;
  std::size_t start = 0;
  while (reports.size() < 4 && start <= input.size()) {
    std::size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    try {
      reports.push_back(cplab::reports::from_json(input.substr(start, end - start)));
    } catch (const cplab::Error&) {
      return 0;
    }
    start = end + 1;
  }
  try {
    const cplab::properties::SweepReport merged = cplab::reports::merge(reports);
    const std::string json = cplab::reports::to_json(merged);
    (void)cplab::reports::to_junit(merged);
    (void)cplab::reports::to_markdown(merged);
    if (cplab::reports::to_json(cplab::reports::from_json(json)) != json) __builtin_trap();
  } catch (const cplab::Error&) {
  }
  return 0;
}
