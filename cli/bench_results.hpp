#pragma once
// Benchmark results as `cplab bench run` writes them: Google Benchmark's JSON (context,
// benchmarks) plus context.cplab (commit, compiler, flags, CPU, GPU, CUDA). Read back per
// benchmark as the samples of its repetitions.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cplab::cli {

struct BenchSeries {
  std::string name;             // run_name: the same across repetitions
  std::vector<double> time_ns;  // real time per iteration, one per repetition
  std::vector<double> ratio;    // ratio_to_baseline, one per repetition (empty when not reported)
  std::string error;            // the benchmark's own error (a failed output check), if any
  bool skipped = false;         // skipped where it cannot run ("skipped: no CUDA device")
};

struct BenchFile {
  std::string path;
  nlohmann::json context;
  std::vector<BenchSeries> series;  // in the file's order
  const BenchSeries* find(const std::string& name) const;
};

// Throws cplab::Error (bad input) naming the file when it is not such a file.
BenchFile read_bench_file(const std::string& path);

double median(std::vector<double> values);

// The context of a comparison: what built and ran the benchmarks (one line, for reports).
std::string describe_context(const nlohmann::json& context);

}  // namespace cplab::cli
