#pragma once
// `cplab bench run`: the benchmark suites this build has, as one Google Benchmark JSON file
// with context.cplab (commit, compiler, flags, CPU, GPU, CUDA, complete) added. Exits 1 when a
// benchmark's own output check failed (the file is still written), 2 on bad arguments or when a
// suite died or wrote output that does not parse, 128 + N when stopped by signal N; in those
// cases what completed is still written, with context.cplab.complete false and the problems, and
// the suite's part file is kept beside --out.
#include <string>

namespace cplab::perf {

struct BenchRunArgs {
  std::string suite = "all";
  std::string filter;
  int repetitions = 1;
  double min_time = 0.0;  // seconds per benchmark (Google Benchmark's default when 0)
  std::string out;
};

int run_bench(const BenchRunArgs& args);

}  // namespace cplab::perf
