// Benchmark result files from the fuzzer (up to four, separated by a NUL byte), read as `cplab
// bench compare` and `bench history` read them: each is refused with cplab::Error or read; the
// first two are compared and all of them charted as history data. What is read must hold
// together: every series is found by its name, a comparison has a row per name of either file,
// a change is given only between two positive medians, and every line from the files prints as
// one printable line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/untrusted_text.hpp"
#include "perf/bench_compare.hpp"
#include "perf/bench_history.hpp"
#include "perf/bench_json.hpp"
#include "perf/bench_results.hpp"

namespace {

void check_one_line(const std::string& text) {
  for (unsigned char ch : cplab::escape_untrusted(text)) {
    if (ch < 0x20 || ch == 0x7f) __builtin_trap();
  }
}

void check_file(const cplab::perf::BenchFile& file) {
  if (file.index.size() != file.series.size()) __builtin_trap();
  for (const cplab::perf::BenchSeries& s : file.series) {
    if (file.find(s.name) != &s) __builtin_trap();
    if (s.time_ns.size() > s.repetitions || s.ratio.size() > s.repetitions) __builtin_trap();
    for (double v : s.time_ns) {
      if (!std::isfinite(v)) __builtin_trap();
    }
    for (double v : s.ratio) {
      if (!std::isfinite(v)) __builtin_trap();
    }
    check_one_line(s.name);
  }
  check_one_line(cplab::perf::describe_missing(file));
  check_one_line(cplab::perf::describe_context(file.context));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<cplab::perf::BenchFile> files;
  std::size_t start = 0;
  while (files.size() < 4 && start <= input.size()) {
    std::size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    const std::string text = input.substr(start, end - start);
    // What bench run keeps of a suite's output that does not parse.
    const cplab::perf::BenchJson parsed = cplab::perf::parse_bench_json(text);
    if (parsed.offset > text.size()) __builtin_trap();
    if (parsed.complete != parsed.error.empty()) __builtin_trap();
    try {
      files.push_back(cplab::perf::read_bench_text(text, "f" + std::to_string(files.size())));
    } catch (const cplab::Error& e) {
      check_one_line(e.what());
      return 0;
    }
    check_file(files.back());
    start = end + 1;
  }
  if (files.size() >= 2) {
    const std::vector<cplab::perf::BenchChange> changes =
        cplab::perf::compare_files(files[0], files[1], {});
    std::size_t names = files[0].series.size();
    for (const cplab::perf::BenchSeries& s : files[1].series)
      names += files[0].find(s.name) ? 0 : 1;
    if (changes.size() != names) __builtin_trap();
    for (const cplab::perf::BenchChange& c : changes) {
      if (c.note.empty() != !c.verdict.empty()) __builtin_trap();
      if (c.comparable && (!(c.base > 0.0) || !(c.now > 0.0) || !std::isfinite(c.change)))
        __builtin_trap();
      if (c.regression && !c.comparable) __builtin_trap();
      check_one_line(c.verdict + c.note);
    }
  }
  for (const cplab::perf::HistorySeries& series : cplab::perf::history_series(files, 10.0)) {
    if (series.points.empty()) __builtin_trap();
    for (const cplab::perf::HistoryPoint& p : series.points) {
      if (!std::isfinite(p.median) || p.lo > p.hi) __builtin_trap();
    }
  }
  return 0;
}
