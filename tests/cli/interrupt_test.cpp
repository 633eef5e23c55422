// `cplab sweep` interrupted: SIGINT or SIGTERM while jobs run leaves report.json valid, holding the
// jobs that finished, marked "complete": false, and the exit status 128 + signal; a stale report
// of an earlier run in the same --out is replaced before the first case. A signal during the
// sweep's slow start (before its seed line) has the same outcome, with no job run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

extern char** environ;

namespace cplab::clitest {
namespace {

using testsupport::fresh_dir;
using testsupport::slurp;

// report.json parsed, or null while it is missing (a half-written file would fail to parse: the
// writer renames a complete temporary file into place, so that must never happen).
nlohmann::json read_report(const std::filesystem::path& dir) {
  const std::string text = slurp((dir / "report.json").string());
  if (text.empty()) return nullptr;
  return nlohmann::json::parse(text);
}

void interrupt_after_first_job(int signal_number) {
  const std::filesystem::path out = fresh_dir("interrupt_" + std::to_string(signal_number));
  std::filesystem::create_directories(out);
  {
    std::ofstream stale(out / "report.json");
    stale << R"({"schema": "cplab-sweep-report/1", "stale": true})";
  }
  // Every registered layout: more jobs than run before the signal.
  std::string layouts;
  std::size_t layout_count = 0;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    layouts += (layout_count++ == 0 ? "" : ",") + std::string(layout.name);
  }
  std::vector<std::string> args = {CPLAB_BINARY, "sweep", "--seed", "9",
                                   "--cases",    "400",   "--impl", "sim",
                                   "--layouts",  layouts, "--out",  out.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, CPLAB_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Wait (bounded) until the report on disk is this run's and holds a finished job.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool started = false;
  while (std::chrono::steady_clock::now() < deadline) {
    const nlohmann::json report = read_report(out);
    if (report.is_object() && !report.contains("stale")) {
      EXPECT_EQ(report.at("complete"), false);  // while it runs
      if (!report.at("results").empty()) {
        started = true;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition
  }
  ASSERT_TRUE(started) << "no job finished within 120 s";
  ASSERT_EQ(kill(pid, signal_number), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 128 + signal_number);
  const nlohmann::json report = read_report(out);
  EXPECT_EQ(report.at("complete"), false);
  const std::size_t ran = report.at("results").size();
  EXPECT_GE(ran, 1u);
  EXPECT_LT(ran, 9 * layout_count);  // 9 properties × the layouts: the sweep did not run to its end
  EXPECT_EQ(report.at("totals").at("jobs"), ran);
  for (const char* name : {"junit.xml", "summary.md"})
    EXPECT_TRUE(std::filesystem::exists(out / name)) << name;
  std::filesystem::remove_all(out);
}

TEST(SweepInterrupt, SigintLeavesAValidIncompleteReport) { interrupt_after_first_job(SIGINT); }
TEST(SweepInterrupt, SigtermLeavesAValidIncompleteReport) { interrupt_after_first_job(SIGTERM); }

// The sweep's start-up, held at one of its slow steps: the first report's page asks git for the
// build's commit, and a stand-in `git` first on PATH tells the test it was called (writing to
// a FIFO), then waits until the test releases it. The signal is sent while the sweep waits there,
// before its seed line: it once ended the process by the signal, leaving an earlier run's
// report.json unmarked in --out.
void interrupt_during_start_up(int signal_number) {
  const std::filesystem::path root = fresh_dir("start_up_" + std::to_string(signal_number));
  const std::filesystem::path out = root / "out", bin = root / "bin";
  const std::filesystem::path reached = root / "reached", release = root / "release";
  std::filesystem::create_directories(out);
  std::filesystem::create_directories(bin);
  { std::ofstream(out / "report.json") << R"({"schema": "cplab-sweep-report/1", "stale": true})"; }
  ASSERT_EQ(mkfifo(reached.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(release.c_str(), 0600), 0);
  {
    // Only the first call waits (later pages ask again); every call fails, as outside a checkout.
    std::ofstream git(bin / "git");
    git << "#!/bin/sh\n"
        << "if mkdir '" << (root / "held").string() << "' 2>/dev/null; then\n"
        << "  echo reached > '" << reached.string() << "'\n"
        << "  read line < '" << release.string() << "'\n"
        << "fi\n"
        << "exit 1\n";
  }
  std::filesystem::permissions(bin / "git", std::filesystem::perms::owner_all);
  // Opened before the sweep starts, without waiting for the writer: the stand-in's line arrives
  // here.
  const int reached_fd = open(reached.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reached_fd, 0);
  int out_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);

  // Any layout: the signal comes before the first job.
  std::vector<std::string> args = {
      CPLAB_BINARY, "sweep",     "--seed", "9",         "--cases",
      "400",        "--impl",    "sim",    "--layouts", testsupport::a_plain_layout(),
      "--out",      out.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("PATH=", 0) != 0) env_text.emplace_back(*e);
  }
  const char* path = std::getenv("PATH");
  env_text.push_back("PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin"));
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, reached_fd);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, CPLAB_BINARY, &actions, nullptr, argv.data(), env.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);

  // Wait (bounded) for the stand-in's line; a sweep that ends first never reached the step.
  bool held = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!held && std::chrono::steady_clock::now() < deadline) {
    pollfd fd{reached_fd, POLLIN, 0};
    if (poll(&fd, 1, 100) > 0 && (fd.revents & POLLIN) != 0) held = true;
    int status = 0;
    if (!held && waitpid(pid, &status, WNOHANG) == pid) break;
  }
  close(reached_fd);
  ASSERT_TRUE(held) << "the sweep never asked git for its commit within 120 s";
  // Nothing on stdout yet: the seed line comes after this step.
  pollfd printed{out_pipe[0], POLLIN, 0};
  EXPECT_EQ(poll(&printed, 1, 0), 0) << "the sweep printed before its start-up was over";
  ASSERT_EQ(kill(pid, signal_number), 0);
  {
    std::ofstream go(release);  // blocks until the stand-in opens it: it is waiting to
    go << "go\n";
  }
  std::string stdout_text;
  char buffer[4096];
  for (ssize_t n; (n = read(out_pipe[0], buffer, sizeof buffer)) > 0;)
    stdout_text.append(buffer, static_cast<std::size_t>(n));
  close(out_pipe[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status)
                                 << " instead of stopping; stdout: " << stdout_text;
  EXPECT_EQ(WEXITSTATUS(status), 128 + signal_number) << stdout_text;
  const nlohmann::json report = read_report(out);
  ASSERT_TRUE(report.is_object()) << "no report.json";
  EXPECT_FALSE(report.contains("stale")) << "the earlier run's report is still there, unmarked";
  EXPECT_EQ(report.at("complete"), false);
  EXPECT_TRUE(report.at("results").empty()) << "a job ran after the stop was asked for";
  EXPECT_NE(stdout_text.find("cplab sweep: seed 9"), std::string::npos) << stdout_text;
  std::filesystem::remove_all(root);
}

TEST(SweepInterrupt, SigintDuringStartUpStopsBeforeTheFirstCase) {
  interrupt_during_start_up(SIGINT);
}
TEST(SweepInterrupt, SigtermDuringStartUpStopsBeforeTheFirstCase) {
  interrupt_during_start_up(SIGTERM);
}

}  // namespace
}  // namespace cplab::clitest
