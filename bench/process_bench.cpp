// The cplab executable as users run it: a whole process per command, spawned and waited for,
// against /bin/true spawned the same way in the same loop (what any process costs here). `--help`
// and a small `layout` measure start-up alone (no libtorch, no CUDA: io/plugin_library.hpp); a
// small `layout --batch` adds opening the torch plugin; `layout --json` and `explain` at 1M and 16M
// tokens measure planning and writing at the scale users run. ratio_to_baseline is /bin/true's
// seconds over the command's; times_true its inverse.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_layouts.hpp"
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "core/batch.hpp"
#include "core/standard_keys.hpp"
#include "io/torch_batch.hpp"
#include "io/torch_tensors.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

extern char** environ;

namespace cplab::bench {
namespace {

std::string cplab_path() {
  std::filesystem::path path = CPLAB_BENCH_CPLAB;  // relative to this executable's folder
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && path.is_relative()) path = self.parent_path() / path;
  return path.lexically_normal().string();
}

// Runs argv with stdout and stderr to /dev/null; its exit status, -1 when it did not exit.
int run_process(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string scratch_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("cplab_process_bench." + std::to_string(::getpid()) + "." + name))
      .string();
}

// A BSHD row of 64 tokens (input_ids 1000 + t, labels 2000 + t).
Batch small_row() {
  Batch batch;
  std::vector<std::int64_t> ids(64), labels(64);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = 1000 + static_cast<std::int64_t>(i);
    labels[i] = 2000 + static_cast<std::int64_t>(i);
  }
  batch.add(keys::input_ids, Tensor::from<std::int64_t>({1, 64}, ids));
  batch.add(keys::labels, Tensor::from<std::int64_t>({1, 64}, labels));
  return batch;
}

// small_row() saved as a batch file.
std::string small_batch() {
  const std::string path = scratch_path("batch.pt");
  io::save_torch_batch(small_row(), path);
  return path;
}

// Rank r's shard of small_batch() at C = 2 under `layout` (its input_ids and labels, as the
// reference shards them), as a sharder saves it: the check then answers MATCH, exit 0.
std::string small_shard(const std::string& layout, int rank) {
  const std::string path = scratch_path("shard" + std::to_string(rank) + ".pt");
  const Batch batch = small_row();
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = 2;
  const auto sharded = reference::shard_batch(reference::plan(spec, batch), batch);
  const Batch& local = sharded[0][static_cast<std::size_t>(rank)];
  io::save_torch_tensors(
      {{keys::input_ids, local.at(keys::input_ids)}, {keys::labels, local.at(keys::labels)}}, path);
  return path;
}

// The value of `--layout` in args ("" where none is given).
std::string layout_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--layout") return args[i + 1];
  }
  return {};
}

void BM_cplab_process(benchmark::State& state, std::vector<std::string> args) {
  const std::string binary = cplab_path();
  const std::string layout = layout_of(args);
  std::vector<std::string> scratch;  // files made for this benchmark, removed after it
  for (std::string& a : args) {
    if (a != "BATCH" && a != "SHARD0" && a != "SHARD1") continue;
    if (!io::torch_available()) {
      state.SkipWithError("built without libtorch: no batch file to read");
      return;
    }
    a = a == "BATCH" ? small_batch() : small_shard(layout, a == "SHARD0" ? 0 : 1);
    scratch.push_back(a);
  }
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<double> own, baseline;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    const int status = run_process(argv);
    own.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    const int true_status = run_process({"/bin/true"});
    baseline.push_back(seconds_since(start));
    if (status != 0 || true_status != 0) {
      state.SkipWithError(status != 0 ? "cplab did not exit 0" : "/bin/true did not exit 0");
      break;
    }
  }
  for (const std::string& path : scratch) std::filesystem::remove(path);
  if (own.empty()) return;
  const double mine = median_of(own), truth = median_of(baseline);
  report_ratio(state, mine * static_cast<double>(own.size()), truth);
  state.counters["seconds"] = mine;
  state.counters["times_true"] = truth > 0 ? mine / truth : 0.0;
  state.SetItemsProcessed(static_cast<std::int64_t>(own.size()));  // processes run
}

// The slow commands (1M and 16M tokens) run as many times as --min-time asks, at least once; the
// start-up ones a fixed number of times, enough for a median of a few milliseconds.
void register_one(const std::string& name, std::vector<std::string> args, int iterations) {
  auto* b = benchmark::RegisterBenchmark(("BM_cplab_process/" + name).c_str(), BM_cplab_process,
                                         std::move(args));
  if (iterations > 0) b->Iterations(iterations);
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_process_benchmarks() {
  // The layouts by kind (bench_layouts.hpp): head-tail and contiguous today.
  const std::string balanced = a_balanced_layout(), plain = a_plain_layout();
  register_one("help", {"--help"}, 50);
  register_one("layout_small",
               {"layout", "--layout", balanced, "--cp", "4", "--seq-len", "64", "--json"}, 50);
  register_one("layout_batch_small",
               {"layout", "--layout", balanced, "--cp", "2", "--json", "--batch", "BATCH"}, 10);
  register_one(
      "check_small",
      {"check", "--layout", plain, "--cp", "2", "--batch", "BATCH", "--shards", "SHARD0", "SHARD1"},
      10);
  for (const auto& [tokens, name] :
       std::vector<std::pair<std::string, std::string>>{{"1048576", "1M"}, {"16777216", "16M"}}) {
    const int iterations = 0;
    register_one("layout_json_" + name,
                 {"layout", "--layout", balanced, "--cp", "8", "--seq-len", tokens, "--json"},
                 iterations);
    register_one("layout_all_" + name,
                 {"layout", "--layout", "all", "--cp", "8", "--seq-len", tokens}, iterations);
    register_one("explain_" + name,
                 {"explain", "--layout", balanced, "--cp", "8", "--seq-len", tokens}, iterations);
  }
}

}  // namespace cplab::bench
