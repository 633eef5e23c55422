#include "perf/bench_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_file.hpp"
#include "core/source_dir.hpp"
#include "core/untrusted_text.hpp"
#include "perf/bench_json.hpp"
#include "perf/bench_name_index.hpp"

extern char** environ;

namespace cplab::perf {
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
  const std::string source = cplab::source_dir();
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

// The signal that asked `bench run` to stop (0: none). Set by the handler: one lock-free store.
std::atomic<int> stop_signal{0};

extern "C" void on_bench_stop_signal(int signal_number) { stop_signal.store(signal_number); }

// SIGINT and SIGTERM while the suites run: the running suite is stopped and what ran is written,
// marked incomplete. A second signal has the default effect (SA_RESETHAND). Restored on exit.
class StopSignals {
 public:
  StopSignals() {
    stop_signal.store(0);
    struct sigaction action {};
    action.sa_handler = on_bench_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;  // no SA_RESTART: waitpid returns to forward the stop
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

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
  bool forwarded = false;
  while (::waitpid(pid, &status, 0) < 0) {
    // Interrupted by a stop request: the suite stops too (it may not share our process group).
    if (stop_signal.load() != 0 && !forwarded) {
      ::kill(pid, SIGTERM);
      forwarded = true;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The names of a suite's benchmarks the filter selects (all of them without one), in the order
// the suite runs them.
std::vector<std::string> list_selected(const fs::path& exe, const BenchRunArgs& args,
                                       const fs::path& scratch) {
  std::vector<std::string> argv = {exe.string(), "--benchmark_list_tests=true"};
  if (!args.filter.empty()) argv.push_back("--benchmark_filter=" + args.filter);
  const int status = spawn_and_wait(argv, &scratch);
  std::vector<std::string> names;
  {
    std::ifstream in(scratch);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) names.push_back(line);
    }
  }
  std::error_code ec;
  fs::remove(scratch, ec);
  if (stop_signal.load() != 0) return names;  // the listing was stopped with bench run
  // A filter that is no regular expression: the suite says so (dropped) and exits non-zero.
  CPLAB_CHECK(status == 0 || args.filter.empty(),
              "bench run: --filter '{}' is not a regular expression that {} accepts", args.filter,
              exe.filename().string());
  CPLAB_CHECK(status == 0, "bench run: {} cannot list its benchmarks (status {})", exe.string(),
              status);
  return names;
}

std::string describe_status(int status) {
  if (status > 128 && status < 128 + 65) {
    const char* name = ::sigabbrev_np(status - 128);
    return fmt::format("was killed by SIG{}", name != nullptr ? name : "?");
  }
  return fmt::format("exited with status {}", status);
}

// The first selected benchmark with no entry in the suite's output: the one it was running when
// it stopped ("" when every one has entries).
std::string first_unwritten(const std::vector<std::string>& selected,
                            const nlohmann::json& benchmarks) {
  NameIndex written;
  for (const nlohmann::json& b : benchmarks) {
    if (b.contains("run_name") && b["run_name"].is_string())
      written.insert(b["run_name"].get<std::string>(), 0);
  }
  for (const std::string& name : selected) {
    if (!written.find(name)) return name;
  }
  return "";
}

// What one suite left: the entries that are whole, and what went wrong ("" when nothing did).
struct SuiteOutput {
  nlohmann::json context;
  nlohmann::json benchmarks = nlohmann::json::array();
  std::string problem;
};

SuiteOutput read_suite_output(const fs::path& exe, const fs::path& part, int status,
                              const std::vector<std::string>& selected) {
  SuiteOutput out;
  std::error_code ec;
  const bool exists = fs::is_regular_file(part, ec);
  const BenchJson parsed = parse_bench_json(exists ? read_text_file(part.string()) : std::string());
  if (parsed.doc.is_object()) {
    if (parsed.doc.contains("context") && parsed.doc["context"].is_object())
      out.context = parsed.doc["context"];
    if (parsed.doc.contains("benchmarks") && parsed.doc["benchmarks"].is_array())
      out.benchmarks = parsed.doc["benchmarks"];
  }
  if (parsed.non_finite > 0) {
    std::fprintf(stderr,
                 "cplab bench run: note: %s wrote %zu values that are not finite numbers (NaN, "
                 "Infinity): read as missing (null)\n",
                 escape_untrusted(exe.filename().string()).c_str(), parsed.non_finite);
  }
  const std::string kept =
      exists ? fmt::format("; its output is kept in {}", part.string()) : "; it wrote no output";
  if (status != 0) {
    const std::string running = first_unwritten(selected, out.benchmarks);
    out.problem = fmt::format("{} {}{}{}", exe.string(), describe_status(status),
                              running.empty() ? "" : " while running " + running, kept);
  } else if (!parsed.complete) {
    out.problem = fmt::format("{} wrote output that is not JSON: {} at byte {} ({}){}",
                              exe.string(), part.string(), parsed.offset, parsed.error,
                              parsed.inside.empty() ? "" : ", in the entry of " + parsed.inside);
  } else if (!parsed.doc.is_object() || !parsed.doc.contains("benchmarks")) {
    out.problem = fmt::format("{} wrote no benchmark JSON{}", exe.string(), kept);
  }
  return out;
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

// What the suites left: every benchmark entry, the first suite's context, and which suites ran,
// were not built, matched no benchmark, or went wrong (with why).
struct SuitesRun {
  nlohmann::json merged = {{"benchmarks", nlohmann::json::array()}};
  bool started = false;  // a suite ran: from here on a file is written, whole or marked incomplete
  std::vector<std::string> ran, missing, unmatched, problems;
};

// Each suite asked for, one after the other, until they are done or a stop signal came.
SuitesRun run_suites(const std::vector<std::string>& suites, const BenchRunArgs& args,
                     const fs::path& dir) {
  SuitesRun run;
  for (const std::string& suite : suites) {
    const fs::path exe = dir / ("cplab_bench_" + suite);
    if (!fs::exists(exe)) {
      // An explicitly chosen suite must exist; `all` takes what this build has.
      CPLAB_CHECK(args.suite == "all", "bench run: {} was not built{}", exe.string(),
                  suite == "gpu" ? " (configure with CUDA to build the GPU suite)" : "");
      run.missing.push_back(suite);
      continue;
    }
    const fs::path part = fs::path(args.out).string() + "." + suite + ".part";
    const std::vector<std::string> selected = list_selected(exe, args, part);
    if (stop_signal.load() != 0) break;
    if (selected.empty()) {
      run.unmatched.push_back(suite);
      continue;
    }
    run.started = true;
    const int status = run_suite(exe, args, part);
    SuiteOutput output = read_suite_output(exe, part, status, selected);
    for (auto& b : output.benchmarks) {
      b["suite"] = suite;
      run.merged["benchmarks"].push_back(std::move(b));
    }
    if (!run.merged.contains("context") && output.context.is_object())
      run.merged["context"] = std::move(output.context);
    if (!output.problem.empty()) {
      run.problems.push_back(std::move(output.problem));
      if (stop_signal.load() != 0) break;
      continue;  // the other suites still run: they do not depend on this one
    }
    std::error_code ec;
    fs::remove(part, ec);
    run.ran.push_back(suite);
  }
  return run;
}

// The benchmarks whose own output check failed (a skip is not a failure), each said on stderr.
std::size_t report_failed_checks(const nlohmann::json& benchmarks) {
  std::size_t failed = 0;
  for (const auto& b : benchmarks) {
    const std::string message = b.value("error_message", "");
    if (b.value("error_occurred", false) && message.rfind("skipped", 0) != 0) {
      std::fprintf(stderr, "cplab bench run: %s: %s\n",
                   escape_untrusted(b.value("name", "?")).c_str(),
                   escape_untrusted(message).c_str());
      ++failed;
    }
  }
  return failed;
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
  const StopSignals stop_signals;
  SuitesRun run = run_suites(suites, args, dir);
  nlohmann::json& merged = run.merged;
  std::vector<std::string>& problems = run.problems;
  const int stopped_by = stop_signal.load();
  if (stopped_by != 0)
    problems.insert(problems.begin(), fmt::format("stopped by signal {}", stopped_by));
  if (!run.started && stopped_by == 0) {
    CPLAB_CHECK(run.unmatched.empty(),
                "bench run: --filter '{}' matches no benchmark of the {} suite{}", args.filter,
                fmt::join(run.unmatched, " and "), run.unmatched.size() == 1 ? "" : "s");
    CPLAB_FAIL("bench run: no suite was built in {}", dir.string());
  }
  if (!merged.contains("context")) merged["context"] = nlohmann::json::object();
  merged["context"]["cplab"] = build_context(run.ran);
  merged["context"]["cplab"]["suites_not_built"] = run.missing;
  merged["context"]["cplab"]["complete"] = problems.empty();
  if (!problems.empty()) merged["context"]["cplab"]["problems"] = problems;
  write_output_file(args.out,
                    merged.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  const std::size_t runs = merged["benchmarks"].size();
  if (!problems.empty()) {
    // One line: every problem, then where what completed went.
    const std::string what = fmt::format(
        "{}; the {} benchmark runs that completed are in {}, marked \"complete\": false",
        fmt::join(problems, "; "), runs, args.out);
    if (stopped_by != 0) {
      std::fprintf(stderr, "cplab bench run: %s\n", escape_untrusted(what).c_str());
      return 128 + stopped_by;
    }
    CPLAB_FAIL("bench run: {}", what);
  }
  const std::size_t failed = report_failed_checks(merged["benchmarks"]);
  fmt::print("bench run: {} benchmark runs of suites {} → {}{}\n", runs, fmt::join(run.ran, ", "),
             args.out, failed ? fmt::format(" ({} failed their output check)", failed) : "");
  return failed ? 1 : 0;
}

}  // namespace cplab::perf
