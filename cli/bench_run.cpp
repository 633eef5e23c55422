#include "cli/bench_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/bench_results.hpp"
#include "reference/types/error.hpp"

extern char** environ;

namespace cplab::cli {
namespace {

namespace fs = std::filesystem;

// The folder the benchmark executables were built into: CPLAB_BENCH_DIR, else bench/ beside this
// executable's folder (build/cli/cplab, build/bench/cplab_bench_cpu).
fs::path bench_dir() {
  if (const char* dir = std::getenv("CPLAB_BENCH_DIR"); dir != nullptr && *dir != '\0') return dir;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("bench") : self.parent_path().parent_path() / "bench";
}

// First line of a command's output ("" when it fails or prints nothing).
std::string first_line(const std::string& command) {
  std::FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  std::array<char, 512> buffer{};
  std::string line;
  if (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) line = buffer.data();
  ::pclose(pipe);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

nlohmann::json build_context(const std::vector<std::string>& suites) {
  const std::string source = CPLAB_SOURCE_DIR;
  std::string commit = first_line("git -C '" + source + "' rev-parse HEAD");
  if (commit.empty()) commit = "unknown";
  const bool dirty = !first_line("git -C '" + source + "' status --porcelain -uno").empty();
  std::string gpu = first_line("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader");
  return {{"commit", commit},
          {"dirty", dirty},
          {"subject", first_line("git -C '" + source + "' log -1 --format=%s")},
          {"compiler", CPLAB_COMPILER},
          {"build_type", CPLAB_BUILD_TYPE},
          {"flags", CPLAB_CXX_FLAGS},
          {"cpu", cpu_model()},
          {"cores", static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))},
          {"gpu", gpu.empty() ? "none" : gpu},
          {"cuda", CPLAB_CUDA_VERSION},
          {"suites", suites}};
}

// Runs argv (no shell: the filter is the user's text); with `listing`, its stdout goes there and
// its stderr is dropped. Returns its exit status.
int spawn_and_wait(std::vector<std::string> argv, const fs::path* listing) {
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (listing != nullptr) {
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, listing->c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  CPLAB_CHECK(spawned == 0, "bench run: cannot start {}", argv[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// How many of a suite's benchmarks the filter selects (all of them without one).
std::size_t count_selected(const fs::path& exe, const BenchRunArgs& args, const fs::path& scratch) {
  std::vector<std::string> argv = {exe.string(), "--benchmark_list_tests=true"};
  if (!args.filter.empty()) argv.push_back("--benchmark_filter=" + args.filter);
  const int status = spawn_and_wait(argv, &scratch);
  std::size_t names = 0;
  {
    std::ifstream in(scratch);
    for (std::string line; std::getline(in, line);) names += line.empty() ? 0 : 1;
  }
  std::error_code ec;
  fs::remove(scratch, ec);
  // A filter that is no regular expression: the suite says so (dropped) and exits non-zero.
  CPLAB_CHECK(status == 0 || args.filter.empty(),
              "bench run: --filter '{}' is not a regular expression that {} accepts", args.filter,
              exe.filename().string());
  CPLAB_CHECK(status == 0, "bench run: {} cannot list its benchmarks (status {})", exe.string(),
              status);
  return names;
}

// Runs one suite's executable with its JSON going to `out`; returns its exit status.
int run_suite(const fs::path& exe, const BenchRunArgs& args, const fs::path& out) {
  std::vector<std::string> argv = {exe.string(), "--benchmark_out=" + out.string(),
                                   "--benchmark_out_format=json"};
  if (!args.filter.empty()) argv.push_back("--benchmark_filter=" + args.filter);
  if (args.repetitions > 1)
    argv.push_back("--benchmark_repetitions=" + std::to_string(args.repetitions));
  if (args.min_time > 0.0) argv.push_back(fmt::format("--benchmark_min_time={}", args.min_time));
  return spawn_and_wait(std::move(argv), nullptr);
}

// Refuses an --out that cannot be written before the suites run (minutes), and before a suite's own
// complaint about its part file beside it reaches stderr.
void probe_output(const std::string& out) {
  std::error_code ec;
  CPLAB_CHECK(!fs::is_directory(out, ec), "bench run: cannot write {} (a folder)", out);
  const fs::path tmp = out + ".tmp";
  bool writable = false;
  {
    std::ofstream probe(tmp);
    writable = probe.good();
  }
  fs::remove(tmp, ec);
  CPLAB_CHECK(writable, "bench run: cannot write {}", out);
}

}  // namespace

int run_bench(const BenchRunArgs& args) {
  std::vector<std::string> suites;
  if (args.suite == "cpu" || args.suite == "all") suites.push_back("cpu");
  if (args.suite == "gpu" || args.suite == "all") suites.push_back("gpu");
  CPLAB_CHECK(!suites.empty(), "bench run: --suite must be cpu, gpu or all, not '{}'", args.suite);
  CPLAB_CHECK(args.repetitions >= 1, "bench run: --repetitions must be at least 1");
  probe_output(args.out);
  const fs::path dir = bench_dir();
  nlohmann::json merged;
  std::vector<std::string> ran, missing, unmatched;
  for (const std::string& suite : suites) {
    const fs::path exe = dir / ("cplab_bench_" + suite);
    if (!fs::exists(exe)) {
      // An explicitly chosen suite must exist; `all` takes what this build has.
      CPLAB_CHECK(args.suite == "all", "bench run: {} was not built{}", exe.string(),
                  suite == "gpu" ? " (configure with CUDA to build the GPU suite)" : "");
      missing.push_back(suite);
      continue;
    }
    const fs::path part = fs::path(args.out).string() + "." + suite + ".part";
    if (count_selected(exe, args, part) == 0) {
      unmatched.push_back(suite);
      continue;
    }
    const int status = run_suite(exe, args, part);
    if (status != 0) {
      std::error_code ec;
      fs::remove(part, ec);
      CPLAB_FAIL("bench run: {} exited with status {}", exe.string(), status);
    }
    std::ifstream in(part);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    std::error_code ec;
    fs::remove(part, ec);
    CPLAB_CHECK(!doc.is_discarded() && doc.contains("benchmarks"),
                "bench run: {} wrote no benchmark JSON", exe.string());
    for (auto& b : doc["benchmarks"]) b["suite"] = suite;
    if (merged.is_null()) {
      merged = std::move(doc);
    } else {
      for (auto& b : doc["benchmarks"]) merged["benchmarks"].push_back(std::move(b));
    }
    ran.push_back(suite);
  }
  CPLAB_CHECK(unmatched.empty() || !merged.is_null(),
              "bench run: --filter '{}' matches no benchmark of the {} suite{}", args.filter,
              fmt::join(unmatched, " and "), unmatched.size() == 1 ? "" : "s");
  CPLAB_CHECK(!merged.is_null(), "bench run: no suite was built in {}", dir.string());
  merged["context"]["cplab"] = build_context(ran);
  merged["context"]["cplab"]["suites_not_built"] = missing;
  // Written whole or not at all: a temporary beside the output, then renamed over it.
  const fs::path tmp = args.out + ".tmp";
  {
    std::ofstream out(tmp);
    CPLAB_CHECK(out.good(), "bench run: cannot write {}", args.out);
    out << merged.dump(2) << "\n";
    CPLAB_CHECK(out.good(), "bench run: cannot write {}", args.out);
  }
  fs::rename(tmp, args.out);
  std::size_t failed = 0;
  for (const auto& b : merged["benchmarks"]) {
    const std::string message = b.value("error_message", "");
    if (b.value("error_occurred", false) && message.rfind("skipped", 0) != 0) {
      std::fprintf(stderr, "cplab bench run: %s: %s\n", b.value("name", "?").c_str(),
                   message.c_str());
      ++failed;
    }
  }
  fmt::print("bench run: {} benchmark runs of suites {} → {}{}\n", merged["benchmarks"].size(),
             fmt::join(ran, ", "), args.out,
             failed ? fmt::format(" ({} failed their output check)", failed) : "");
  return failed ? 1 : 0;
}

}  // namespace cplab::cli
