#pragma once
// The JSON file every suite writes with --benchmark_out: Google Benchmark's own JSON, with one
// rule for values that are not finite numbers. Google Benchmark computes a `cv` aggregate
// (stddev / mean) for every counter, which is 0 / 0 = NaN for a counter that is 0 in every
// repetition (a page-fault count that warm buffers keep at 0), and writes such a double as the
// bare token NaN (Infinity for x / 0), which is not JSON: no JSON reader takes the file. Here a
// counter that is not finite is left out of its entry (missing), an aggregate whose time is not
// finite is left out, and an iteration whose time is not finite is written as failed. The output is
// flushed after every benchmark, so a suite that dies later keeps what it measured on disk.
#include <benchmark/benchmark.h>

#include <vector>

namespace cplab::bench {

class FiniteJsonReporter : public benchmark::JSONReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
};

// The runs as written: non-finite counters dropped, non-finite aggregates dropped, iterations with
// a non-finite time marked as errors.
std::vector<benchmark::BenchmarkReporter::Run> finite_runs(
    const std::vector<benchmark::BenchmarkReporter::Run>& runs);

// Registers nothing; parses Google Benchmark's flags and runs what is registered, writing
// --benchmark_out (JSON) through FiniteJsonReporter. Returns main's exit status.
int run_benchmarks(int argc, char** argv);

}  // namespace cplab::bench
