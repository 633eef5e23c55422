// `cplab bench run` never loses what ran: the planted suite (planted_bench.cpp) fails in each way
// a suite can, and every time the benchmarks that completed are written, marked incomplete, the
// suite's own output is kept beside --out, and one line says what happened where.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/support/cli.hpp"

extern char** environ;

namespace cplab {
namespace {

namespace fs = std::filesystem;
using testsupport::run_cplab;
using testsupport::slurp;

// Sets the planted fault's variable (and points bench run at the planted suite) for one test.
class PlantedFault {
 public:
  PlantedFault(const char* name, const char* value) : name_(name) {
    ::setenv("CPLAB_BENCH_DIR", CPLAB_PLANTED_DIR, 1);
    ::setenv(name, value, 1);
  }
  ~PlantedFault() {
    ::unsetenv(name_);
    ::unsetenv("CPLAB_BENCH_DIR");
  }
  PlantedFault(const PlantedFault&) = delete;
  PlantedFault& operator=(const PlantedFault&) = delete;

 private:
  const char* name_;
};

const std::string kRun = "bench run --suite cpu --repetitions 2 --min-time 0.01 --out ";

// The suite's own table and context go to stdout and stderr as it runs; bench run's verdict is
// exit 2 and one line of its own naming every part.
void expect_one_line_error(const testsupport::CliRun& run, const std::vector<std::string>& parts) {
  EXPECT_EQ(run.status, 2) << run.err;
  std::string own;
  int lines = 0;
  std::istringstream err(run.err);
  for (std::string line; std::getline(err, line);) {
    if (line.rfind("cplab", 0) != 0) continue;
    own = line;
    ++lines;
  }
  EXPECT_EQ(lines, 1) << run.err;
  for (const std::string& part : parts)
    EXPECT_NE(own.find(part), std::string::npos) << "'" << part << "' in " << own;
}

// The file bench run wrote: valid JSON, marked incomplete, with the planted copy's repetitions.
nlohmann::json expect_incomplete_with_the_copy_runs(const std::string& out) {
  const nlohmann::json doc = nlohmann::json::parse(slurp(out));
  EXPECT_FALSE(doc["context"]["cplab"]["complete"].get<bool>());
  EXPECT_FALSE(doc["context"]["cplab"]["problems"].empty());
  int copies = 0;
  for (const auto& b : doc["benchmarks"]) {
    if (b.value("run_type", "") == "iteration" &&
        b.value("run_name", "").rfind("BM_planted_copy", 0) == 0)
      ++copies;
    EXPECT_EQ(b.value("suite", ""), "cpu");
  }
  EXPECT_EQ(copies, 2) << doc.dump(1);
  return doc;
}

TEST(BenchRunFailure, a_counter_that_is_0_in_every_repetition_gives_valid_json) {
  // Its cv aggregate is 0 / 0: Google Benchmark's own writer puts a bare NaN there.
  const testsupport::ScratchDir dir;
  const PlantedFault fault("CPLAB_PLANTED_ZERO", "1");
  const std::string out = dir.file("zero.json");
  const auto run = run_cplab("bench run --suite cpu --repetitions 3 --min-time 0.01 --out " + out);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(out));  // throws on NaN
  EXPECT_TRUE(doc["context"]["cplab"]["complete"].get<bool>());
  int with_zero = 0, aggregates = 0;
  for (const auto& b : doc["benchmarks"]) {
    for (const auto& [field, value] : b.items()) EXPECT_FALSE(value.is_null()) << field;
    if (b.contains("zero")) ++with_zero;
    if (b.value("run_type", "") == "aggregate") ++aggregates;
    if (b.value("aggregate_name", "") == "cv") {
      EXPECT_FALSE(b.contains("zero")) << b.dump();
    }
  }
  EXPECT_EQ(aggregates, 4);  // mean, median, stddev, cv
  EXPECT_EQ(with_zero, 3 + 3) << "the repetitions and the defined aggregates keep the counter";
  EXPECT_FALSE(fs::exists(out + ".cpu.part"));
}

TEST(BenchRunFailure, a_suite_that_dies_keeps_what_ran_and_names_the_benchmark_it_ran) {
  const testsupport::ScratchDir dir;
  const PlantedFault fault("CPLAB_PLANTED_CRASH", "1");
  const std::string out = dir.file("crash.json");
  const auto run = run_cplab(kRun + out);
  expect_one_line_error(
      run, {"killed by SIGABRT", "while running BM_planted_second", "kept in " + out + ".cpu.part",
            "the 6 benchmark runs that completed are in " + out, "\"complete\": false"});
  EXPECT_TRUE(fs::exists(out + ".cpu.part"));
  expect_incomplete_with_the_copy_runs(out);
}

TEST(BenchRunFailure, output_that_is_not_json_is_kept_and_named_with_the_offset_and_entry) {
  // Google Benchmark writes a label unescaped: a control byte in it is no JSON.
  const testsupport::ScratchDir dir;
  const PlantedFault fault("CPLAB_PLANTED_LABEL", "bad\x01label");
  const std::string out = dir.file("label.json");
  const auto run = run_cplab(kRun + out);
  expect_one_line_error(
      run, {"wrote output that is not JSON: " + out + ".cpu.part at byte ", "control character",
            "in the entry of BM_planted_second", "the 6 benchmark runs that completed"});
  EXPECT_EQ(run.err.find('\x01'), std::string::npos) << "the byte itself is escaped";
  const std::string part = slurp(out + ".cpu.part");
  const std::size_t at_text = run.err.find("at byte ") + 8;
  const std::size_t offset = std::stoul(run.err.substr(at_text));
  ASSERT_LT(offset, part.size());
  EXPECT_EQ(part[offset], '\x01') << "the offset is the bad byte's";
  expect_incomplete_with_the_copy_runs(out);
}

TEST(BenchRunFailure, a_stop_signal_writes_what_ran_marked_incomplete) {
  const testsupport::ScratchDir dir;
  const PlantedFault fault("CPLAB_PLANTED_BLOCK", "1");
  const std::string out = dir.file("stopped.json");
  const std::string binary = testsupport::cplab_binary();
  std::vector<std::string> args = {binary, "bench",      "run",  "--suite", "cpu", "--repetitions",
                                   "2",    "--min-time", "0.01", "--out",   out};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string err = dir.file("stderr");
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // The suite flushes each benchmark's entries as it finishes: once the copy's are on disk, the
  // planted second benchmark is waiting for the signal.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto copies_written = [&] {
    return slurp(out + ".cpu.part").find("\"run_name\": \"BM_planted_copy") != std::string::npos;
  };
  while (!copies_written() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(copies_written()) << "the planted copy's entries never reached the part file";
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  const std::string said = slurp(err);
  EXPECT_NE(said.find("stopped by signal 2"), std::string::npos) << said;
  EXPECT_NE(said.find("while running BM_planted_second"), std::string::npos) << said;
  expect_incomplete_with_the_copy_runs(out);
}

}  // namespace
}  // namespace cplab
