// Writes the fuzzers' seed corpora, OUT/<target>/seed-N, with cplab's own writers: .npy files of
// every dtype the reader takes, printed cases, sweep reports of two shards, argument lines, and
// batch declarations; report folders; and benchmark results as Google Benchmark writes them
// (repetitions, aggregates, a NaN cv, a file cut short). The layouts are the registry's (each with
// its own options, as its declaration says), never a list written here. Usage: fuzz_make_corpus OUT
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/layout_option.hpp"
#include "io/npy.hpp"
#include "reference/plan.hpp"
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

// The layout's own options as `key=value` words joined by `sep`, each one above its default (a
// switch on); with `automatic`, only the keys of those that take an automatic value.
std::string own_options(const std::string& layout, char sep, bool automatic = false) {
  std::string out;
  for (const cplab::layouts::LayoutOption* option : cplab::layouts::options_of(layout)) {
    if (automatic && option->automatic == nullptr) continue;
    if (!out.empty()) out += sep;
    out += option->key;
    if (!automatic) out += "=" + std::to_string(option->is_switch ? 1 : option->fallback + 1);
  }
  return out;
}

cplab::properties::SweepReport shard_report(const std::string& layout, std::int64_t index) {
  cplab::properties::SweepReport report;
  report.seed = 42;
  report.cases_per_job = 10;
  report.shards = {{index, 2}};
  report.impls = {"sim"};
  report.seconds = 1.5;
  cplab::properties::JobResult r;
  r.job = index;
  r.property = "shard_then_gather_is_identity";
  r.layout = layout;
  r.impl = "sim";
  r.status =
      index == 0 ? cplab::properties::JobStatus::passed : cplab::properties::JobStatus::failed;
  r.cases = 10;
  r.passed = index == 0 ? 10 : 9;
  r.failed = index == 0 ? 0 : 1;
  r.seed = 18446744073709551557ull;
  if (index == 1) {
    r.counterexample = layout + " cp=2 docs=5";
    r.message = "rank 1 <wrong>";
    r.replay = "cplab replay --impl sim '" + r.counterexample + "'";
  }
  r.coverage = {{layout + " cp=pow2 packed", 10}};
  report.results = {r};
  return report;
}

// .npy files of every dtype the reader takes, an empty one among them.
void npy_seeds(const fs::path& out) {
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
}

// Case lines of every layout: every key of the format (the layout's own options among them),
// and shorter ones (C = 1, several rows, documents, another primary).
void case_seeds(const fs::path& out, const std::vector<std::string>& layouts) {
  int n = 0;
  for (const std::string& layout : layouts) {
    std::string options = own_options(layout, ' ');
    if (!options.empty()) options += ' ';
    const std::vector<std::string> lines = {
        "cp=3 " + options +
            "mb=2 rows=2 S=20 docs=5,3+1,8/12 vocab=37 pad_id=7 policy=spec shard_primary=1 "
            "primary=ids dim=3 dtype=bf16 pos=none keys=loss_mask ignore=100 invalid=50 "
            "pad_content=100 seed=1234",
        "cp=1 S=8", "cp=4 rows=2 S=17 pos=mrope keys=padding_mask,extra",
        "cp=2 " + options + "docs=4,4,1 primary=embeds dim=2 dtype=f16",
        "cp=5 " + options + "S=31"};
    for (const std::string& rest : lines) put(out / "case", n, layout + " " + rest);
  }
}

// Reports to merge: two shards of one sweep, and one alone; then merge_folders: a shard count,
// each shard's kind (0: report.json in its folder, 1: the file named, 2: a FIFO, 3: a folder,
// 4: a link to a FIFO, 5: nothing), then the texts.
void merge_seeds(const fs::path& out, const std::vector<std::string>& layouts) {
  int n = 0;
  for (const std::string& layout : layouts) {
    put(out / "merge", n,
        cplab::reports::to_json(shard_report(layout, 0)) + std::string(1, '\0') +
            cplab::reports::to_json(shard_report(layout, 1)));
    put(out / "merge", n, cplab::reports::to_json(shard_report(layout, 0)));
  }
  n = 0;  // merge_folders numbers its own seeds
  const std::string& first = layouts.front();
  const std::string two_shards = cplab::reports::to_json(shard_report(first, 0)) +
                                 std::string(1, '\0') +
                                 cplab::reports::to_json(shard_report(first, 1));
  put(out / "merge_folders", n, std::string("\x01\x00\x01", 3) + two_shards);
  put(out / "merge_folders", n, std::string("\x01\x00\x02", 3) + two_shards);
  put(out / "merge_folders", n,
      std::string("\x00\x01", 2) + cplab::reports::to_json(shard_report(first, 0)));
  put(out / "merge_folders", n, std::string("\x02\x03\x04\x05", 4) + two_shards);
}

// Argument lines (fuzz_args.cpp): layout, C, its options, the keys given as auto, --doc-lens or
// --seq-len, the seed; an option word without a key among them.
void args_seeds(const fs::path& out, const std::vector<std::string>& layouts) {
  int n = 0;
  for (const std::string& layout : layouts) {
    const std::string options = own_options(layout, ','), autos = own_options(layout, ',', true);
    const std::vector<std::string> lines = {"2\n" + options + "\n\n5,3,8\n42", "4\n3\n\n17\n0",
                                            "8\n\n" + autos + "\n100,28\n18446744073709551615",
                                            "1024\n" + options + "\n" + autos + "\n2048\n7"};
    for (const std::string& rest : lines) put(out / "args", n, layout + "\n" + rest);
  }
}

// Benchmark JSON: repetitions, an aggregate, a skipped run, two files, a truncated one, and
// values that are not finite.
void bench_seeds(const fs::path& out) {
  int n = 0;
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
}

// Batch files: bytes that are no archive, and a header with nothing behind it.
void batch_seeds(const fs::path& out) {
  int n = 0;
  put(out / "batch", n, std::string(64, '\x01'));
  put(out / "batch", n,
      std::string("\x02\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00", 12) +
          std::string(80, '\x03'));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus OUT\n");
    return 2;
  }
  const fs::path out = argv[1];
  const std::vector<std::string> layouts = cplab::reference::layout_names();
  npy_seeds(out);
  case_seeds(out, layouts);
  merge_seeds(out, layouts);
  args_seeds(out, layouts);
  bench_seeds(out);
  batch_seeds(out);
  return 0;
}
