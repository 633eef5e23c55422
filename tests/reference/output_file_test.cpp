// Every output file is written whole or not at all (core/output_file.hpp): a fill that fails, and
// a stop signal while the bytes go out, leave neither the target nor the temporary beside it, and
// an older file at the target stays as it was. The signal is raised from inside the fill, in a
// child process, so that it arrives mid-write every time.
#include "core/output_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace cplab {
namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("output_file_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, IsWrittenWholeAndReplacesAnOlderOne) {
  const fs::path dir = fresh("whole");
  write_output_file((dir / "a.txt").string(), "old");
  write_output_file((dir / "a.txt").string(), std::string(1 << 20, 'x'));
  EXPECT_EQ(text_of(dir / "a.txt"), std::string(1 << 20, 'x'));
  EXPECT_EQ(entries(dir), 1) << "a temporary was left beside the file";
}

TEST(OutputFile, AFillThatFailsLeavesNoFileAndTheOlderOneIntact) {
  const fs::path dir = fresh("fails");
  write_output_file((dir / "a.txt").string(), "old");
  EXPECT_THROW(write_output_file((dir / "a.txt").string(),
                                 [](std::ostream& out) {
                                   out << std::string(1 << 16, 'y');
                                   CPLAB_FAIL("the fill failed");
                                 }),
               Error);
  EXPECT_EQ(text_of(dir / "a.txt"), "old");
  EXPECT_EQ(entries(dir), 1);
  EXPECT_THROW(write_output_file(dir.string(), "x"), Error) << "a folder is refused";
}

// A child writes, and SIGINT / SIGTERM / SIGHUP reaches it mid-write: it ends by that signal, as
// it would have, and leaves nothing behind (a half file at the target or its temporary once).
TEST(OutputFile, AStopSignalMidWriteLeavesNothingBehind) {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    const fs::path dir = fresh("signal_" + std::to_string(sig));
    const std::string target = (dir / "out.json").string();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::signal(sig, SIG_DFL);
      write_output_file(target, [sig](std::ostream& out) {
        out << std::string(1 << 20, 'z');
        out.flush();
        ::raise(sig);
        out << "never";
      });
      ::_exit(0);  // not reached: the signal ends the child
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    EXPECT_EQ(entries(dir), 0) << "the target or its temporary was left behind";
  }
}

// A command that handles the stop signals itself (the sweep records them and stops between steps)
// keeps its handler: the writer only stands in for the default action.
TEST(OutputFile, AHandlerTheCommandInstalledIsKept) {
  static volatile std::sig_atomic_t seen = 0;
  struct sigaction mine {
  }, before{};
  mine.sa_handler = [](int) { seen = 1; };
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGHUP, &mine, &before), 0);
  const fs::path dir = fresh("kept");
  write_output_file((dir / "a.txt").string(), [](std::ostream& out) {
    out << "whole";
    ::raise(SIGHUP);
  });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(text_of(dir / "a.txt"), "whole");
  ::sigaction(SIGHUP, &before, nullptr);
}

}  // namespace
}  // namespace cplab
