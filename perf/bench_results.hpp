#pragma once
// Benchmark results as `cplab bench run` writes them: Google Benchmark's JSON (context,
// benchmarks) plus context.cplab (commit, compiler, flags, CPU, GPU, CUDA). Read back per
// benchmark as the samples of its repetitions.
// Missing values: a value that is not a finite number (NaN or Infinity as Google Benchmark writes
// them, or null) is missing. A repetition without a finite real_time has no time sample, one
// without a finite ratio_to_baseline no ratio sample; the file lists every missing value, and
// `bench compare` and `bench history` say how many they left out.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "perf/bench_name_index.hpp"

namespace cplab::perf {

struct BenchSeries {
  std::string name;             // run_name: the same across repetitions
  std::vector<double> time_ns;  // finite real times per iteration, one per repetition
  std::vector<double> ratio;    // finite ratio_to_baseline values, one per repetition
  bool reports_ratio = true;    // every repetition has a ratio_to_baseline (finite or missing)
  std::size_t repetitions = 0;  // repetitions read (not failed, not skipped)
  std::size_t missing = 0;      // values of its repetitions that are missing (not finite)
  std::string error;            // the benchmark's own error (a failed output check), if any
  bool skipped = false;         // skipped where it cannot run ("skipped: no CUDA device")
};

struct BenchFile {
  std::string path;
  nlohmann::json context;
  std::vector<BenchSeries> series;   // in the file's order
  std::vector<std::string> missing;  // "NAME: FIELD" for every missing value of the file
  NameIndex index;                   // series name → position in `series`
  const BenchSeries* find(const std::string& name) const;
};

// Throws cplab::Error (bad input) naming the file when it is not such a file.
BenchFile read_bench_file(const std::string& path);

// The same from the file's text (path only names it in messages).
BenchFile read_bench_text(const std::string& text, const std::string& path);

double median(std::vector<double> values);

// The context of a comparison: what built and ran the benchmarks (one line, for reports).
std::string describe_context(const nlohmann::json& context);

// One line saying which values of the file were read as missing ("" when none).
std::string describe_missing(const BenchFile& file);

}  // namespace cplab::perf
