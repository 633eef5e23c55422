// `cplab sweep` interrupted: SIGINT or SIGTERM while jobs run leaves report.json valid, holding the
// jobs that finished, marked "complete": false, and the exit status 128 + signal; a stale report
// of an earlier run in the same --out is replaced before the first case.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.hpp"

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
  std::vector<std::string> args = {
      CPLAB_BINARY, "sweep",     "--seed", "9",         "--cases",
      "400",        "--impl",    "sim",    "--layouts", "identity,contiguous,head-tail,thd,magi",
      "--out",      out.string()};
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
  EXPECT_LT(ran, 45u);  // 9 properties × 5 layouts: the sweep did not run to its end
  EXPECT_EQ(report.at("totals").at("jobs"), ran);
  for (const char* name : {"junit.xml", "summary.md"})
    EXPECT_TRUE(std::filesystem::exists(out / name)) << name;
  std::filesystem::remove_all(out);
}

TEST(SweepInterrupt, SigintLeavesAValidIncompleteReport) { interrupt_after_first_job(SIGINT); }
TEST(SweepInterrupt, SigtermLeavesAValidIncompleteReport) { interrupt_after_first_job(SIGTERM); }

}  // namespace
}  // namespace cplab::clitest
