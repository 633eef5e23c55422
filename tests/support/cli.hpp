#pragma once
// Running the built cplab executable from a test, and scratch folders for what it writes. The
// including target defines CPLAB_BINARY: the executable's path, absolute, or relative to the folder
// of the running test executable (cplab_test_runs_cplab in tests/CMakeLists.txt), which keeps the
// compile line the same in every build folder so that ccache reuses the object across clones.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace cplab::testsupport {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline int line_count(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

#ifdef CPLAB_BINARY
inline std::string cplab_binary() {
  std::filesystem::path path = CPLAB_BINARY;
  if (path.is_relative()) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) path = self.parent_path() / path;
  }
  return path.lexically_normal().string();
}
#endif

struct CliRun {
  int status = -1;  // the exit status; -1 when it did not exit normally
  std::string out, err;
};

// timeout(1)'s status when it had to stop the command.
inline constexpr int kTimedOut = 124;

// Runs `cplab <args>` through the shell: stdout read from a pipe, stderr through a file. With
// kill_after_seconds > 0 it is killed then (timeout -s KILL), and its status is kTimedOut.
inline CliRun run_cplab(const std::string& args, int kill_after_seconds = 0) {
#ifndef CPLAB_BINARY
  (void)kill_after_seconds;
  ADD_FAILURE() << "built without the cplab executable; cannot run: cplab " << args;
  return {};
#else
  // ctest runs tests in parallel processes: one stderr file per process.
  const std::string err_path =
      ::testing::TempDir() + "cplab_cli." + std::to_string(::getpid()) + ".stderr";
  const std::string binary = cplab_binary();
  if (!std::filesystem::exists(binary)) {
    ADD_FAILURE() << "no cplab executable at " << binary << "; cannot run: cplab " << args;
    return {};
  }
  const std::string bound =
      kill_after_seconds > 0 ? "timeout -s KILL " + std::to_string(kill_after_seconds) + " " : "";
  const std::string command = bound + binary + " " + args + " 2>" + err_path;
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return run;
  }
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int raw = ::pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (kill_after_seconds > 0 && run.status == 128 + 9) run.status = kTimedOut;  // killed
  run.err = slurp(err_path);
  std::remove(err_path.c_str());
  return run;
#endif
}

// A usage error as every cplab command reports one: exit status 2, nothing on stdout, one line on
// stderr naming every part. `context` (the arguments, say) starts each failure message.
inline void expect_usage_error(const CliRun& run, const std::vector<std::string>& parts,
                               const std::string& context = "") {
  EXPECT_EQ(run.status, 2) << context;
  EXPECT_TRUE(run.out.empty()) << context << ": " << run.out;
  EXPECT_EQ(line_count(run.err), 1) << context << ": " << run.err;
  for (const std::string& part : parts)
    EXPECT_NE(run.err.find(part), std::string::npos)
        << context << ": '" << part << "' in " << run.err;
}

// stderr's one line without the "file.cpp:NN: " of the check that raised it (that moves with the
// code; the words are the contract).
inline std::string refusal_line(const std::string& err) {
  static const std::regex location(R"([A-Za-z0-9_]+\.(cpp|hpp):[0-9]+: )");
  std::string line = err;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return std::regex_replace(line, location, "");
}

// A refusal: exit `status` (2, bad input, unless said), nothing on stdout, and exactly this one
// line on stderr (refusal_line). `context` (the arguments, say) starts each failure message.
inline void expect_refusal(const CliRun& run, const std::string& line, const std::string& context,
                           int status = 2) {
  EXPECT_EQ(run.status, status) << context << "\n" << run.err;
  EXPECT_TRUE(run.out.empty()) << context << ": " << run.out;
  EXPECT_EQ(line_count(run.err), 1) << context << ": " << run.err;
  EXPECT_EQ(refusal_line(run.err), line) << context;
}

// `cplab replay`'s verdict that every property it ran holds ("N of N properties hold"); which N
// the property table has is the properties suite's to check.
inline bool every_property_holds(const std::string& out) {
  static const std::regex verdict(R"(\b([1-9][0-9]*) of \1 properties hold\b)");
  return std::regex_search(out, verdict);
}

// A fresh folder named after the running test, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    path_ = std::filesystem::temp_directory_path() /
            ("cplab_cli_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A path for a command to create (an --out folder): unique to this process, nothing there yet.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("cplab_cli_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace cplab::testsupport
