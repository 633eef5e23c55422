// Writes the fuzzers' seed corpora, OUT/<target>/seed-N, with cplab's own writers: .npy files of
// every dtype the reader takes, printed cases, sweep reports of two shards, argument lines, and
// batch declarations; report folders; and benchmark results as Google Benchmark writes them
// (repetitions, aggregates, a NaN cv, a file cut short). Usage: fuzz_make_corpus OUT
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "reports/sweep_report.hpp"

namespace {

namespace fs = std::filesystem;

void put(const fs::path& dir, int& n, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / ("seed-" + std::to_string(n++)), std::ios::binary) << bytes;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

cplab::properties::SweepReport shard_report(std::int64_t index) {
  cplab::properties::SweepReport report;
  report.seed = 42;
  report.cases_per_job = 10;
  report.shards = {{index, 2}};
  report.impls = {"sim"};
  report.seconds = 1.5;
  cplab::properties::JobResult r;
  r.job = index;
  r.property = "shard_then_gather_is_identity";
  r.layout = "thd";
  r.impl = "sim";
  r.status =
      index == 0 ? cplab::properties::JobStatus::passed : cplab::properties::JobStatus::failed;
  r.cases = 10;
  r.passed = index == 0 ? 10 : 9;
  r.failed = index == 0 ? 0 : 1;
  r.seed = 18446744073709551557ull;
  if (index == 1) {
    r.counterexample = "thd cp=2 docs=5";
    r.message = "rank 1 <wrong>";
    r.replay = "cplab replay --impl sim 'thd cp=2 docs=5'";
  }
  r.coverage = {{"thd cp=pow2 packed", 10}};
  report.results = {r};
  return report;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus OUT\n");
    return 2;
  }
  const fs::path out = argv[1];
  int n = 0;
  const fs::path npy_dir = out / "npy";
  fs::create_directories(npy_dir);
  using cplab::DType;
  for (const auto& [dtype, shape] :
       std::vector<std::pair<DType, cplab::Shape>>{{DType::f32, {2, 3, 4}},
                                                   {DType::f16, {5}},
                                                   {DType::i64, {1, 6}},
                                                   {DType::i32, {3, 2}},
                                                   {DType::u8, {4}},
                                                   {DType::b8, {2, 2}},
                                                   {DType::f32, {0}}}) {
    const fs::path path = npy_dir / "scratch.npy";
    cplab::Tensor t(dtype, shape);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i % 3));
    cplab::io::npy::write(path.string(), t);
    put(npy_dir, n, read(path));
    fs::remove(path);
  }
  n = 0;
  for (const char* text :
       {"thd cp=3 m=2 K=4 mb=2 rows=2 S=20 docs=5,3+1,8/12 vocab=37 pad_id=7 policy=spec "
        "shard_primary=1 primary=ids dim=3 dtype=bf16 pos=none keys=loss_mask ignore=100 "
        "invalid=50 pad_content=100 seed=1234",
        "identity cp=1 S=8", "head-tail cp=4 rows=2 S=17 pos=mrope keys=padding_mask,extra",
        "magi cp=2 K=3 docs=4,4,1 primary=embeds dim=2 dtype=f16", "contiguous cp=5 m=3 S=31"}) {
    put(out / "case", n, text);
  }
  n = 0;
  put(out / "merge", n,
      cplab::reports::to_json(shard_report(0)) + std::string(1, '\0') +
          cplab::reports::to_json(shard_report(1)));
  put(out / "merge", n, cplab::reports::to_json(shard_report(0)));
  // merge_folders: a shard count, each shard's kind (0: report.json in its folder, 1: the file
  // named, 2: a FIFO, 3: a folder, 4: a link to a FIFO, 5: nothing), then the texts.
  n = 0;
  const std::string two_shards = cplab::reports::to_json(shard_report(0)) + std::string(1, '\0') +
                                 cplab::reports::to_json(shard_report(1));
  put(out / "merge_folders", n, std::string("\x01\x00\x01", 3) + two_shards);
  put(out / "merge_folders", n, std::string("\x01\x00\x02", 3) + two_shards);
  put(out / "merge_folders", n,
      std::string("\x00\x01", 2) + cplab::reports::to_json(shard_report(0)));
  put(out / "merge_folders", n, std::string("\x02\x03\x04\x05", 4) + two_shards);
  n = 0;
  for (const char* text :
       {"thd\n2\n\n\n5,3,8\n42", "contiguous\n4\n3\n\n17\n0",
        "magi\n8\n\n16\n100,28\n18446744073709551615", "head-tail\n1024\n\n\n2048\n7"}) {
    put(out / "args", n, text);
  }
  n = 0;
  const std::string bench_context =
      R"({"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "h", "executable": "e",
      "cplab": {"commit": "0123456789abcdef0123456789abcdef01234567", "compiler": "GNU 12",
      "cpu": "x", "complete": true}}, "benchmarks": [)";
  std::string repetitions;
  for (int i = 0; i < 3; ++i) {
    repetitions += std::string(i ? "," : "") +
                   R"({"name": "BM_copy/process_time", "run_name": "BM_copy/process_time",
        "run_type": "iteration", "repetitions": 3, "repetition_index": )" +
                   std::to_string(i) + R"(, "iterations": 84, "real_time": )" +
                   std::to_string(2.4e5 + i * 1e3) + R"(, "cpu_time": 1.7e5, "time_unit": "ns",
        "ratio_to_baseline": 0.99, "page_faults": 0.0})";
  }
  const std::string aggregate =
      R"(,{"name": "BM_copy/process_time_cv", "run_name": "BM_copy/process_time",
      "run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage",
      "iterations": 3, "real_time": 8.35e-02, "cpu_time": 2.81e-02, "page_faults": NaN})";
  const std::string failed =
      R"(,{"name": "BM_gpu", "run_name": "BM_gpu", "run_type": "iteration",
      "error_occurred": true, "error_message": "skipped: no CUDA device", "iterations": 0,
      "real_time": 0, "cpu_time": 0, "time_unit": "ms"})";
  const std::string whole = bench_context + repetitions + aggregate + failed + "]}";
  put(out / "bench", n, whole);
  put(out / "bench", n, whole + std::string(1, '\0') + whole);
  put(out / "bench", n, whole.substr(0, whole.size() / 2));
  put(out / "bench", n,
      bench_context + R"({"name": "BM_z", "real_time": 0, "ratio_to_baseline": 0}]})" +
          std::string(1, '\0') + bench_context +
          R"({"name": "BM_z", "real_time": Infinity, "ratio_to_baseline": 1.02}]})");
  n = 0;
  put(out / "batch", n, std::string(64, '\x01'));
  put(out / "batch", n,
      std::string("\x02\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00", 12) +
          std::string(80, '\x03'));
  return 0;
}
