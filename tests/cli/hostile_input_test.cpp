// Inputs a hostile or careless user hands over that once hung cplab, or answered with the wrong
// exit status or on the wrong stream: each must end in one line on stderr and the status of the
// contract. Every run is bounded (timeout(1)), so that a regression to a hang fails the test
// instead of stalling the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::clitest {
namespace {

using testsupport::CliRun;
using testsupport::line_count;
using testsupport::ScratchDir;
using testsupport::slurp;

using testsupport::kTimedOut;

// `cplab <args>` with stdout and stderr captured, killed after `seconds`.
CliRun run_bounded(int seconds, const std::string& args) {
  return testsupport::run_cplab(args, seconds);
}

void expect_one_line_refusal(const CliRun& run, const std::string& part, const std::string& what) {
  ASSERT_NE(run.status, kTimedOut) << what << ": still running after the bound (a hang)";
  EXPECT_EQ(run.status, 2) << what << "\n" << run.out << run.err;
  EXPECT_TRUE(run.out.empty()) << what << ": " << run.out;
  EXPECT_EQ(line_count(run.err), 1) << what << ": " << run.err;
  EXPECT_NE(run.err.find(part), std::string::npos) << what << ": '" << part << "' in " << run.err;
}

TEST(HostileInput, MergeOfAFifoIsRefusedWithoutWaitingForAWriter) {
  // open() of a FIFO for reading waits for a writer: the merge once waited forever.
  ScratchDir dir;
  const std::filesystem::path shard = dir.file("shard");
  std::filesystem::create_directories(shard);
  ASSERT_EQ(::mkfifo((shard / "report.json").c_str(), 0600), 0);
  const std::string out = " --out " + dir.file("merged");
  expect_one_line_refusal(run_bounded(60, "sweep --merge " + shard.string() + out),
                          shard.string() + "/report.json is a FIFO, not a regular file",
                          "a FIFO in the folder");
  expect_one_line_refusal(
      run_bounded(60, "sweep --merge " + (shard / "report.json").string() + out),
      "is a FIFO, not a regular file", "a FIFO named");
  // Other files that are not regular: a device, and a folder where report.json should be.
  expect_one_line_refusal(run_bounded(60, "sweep --merge /dev/null" + out),
                          "/dev/null is a character device, not a regular file", "a device");
  const std::filesystem::path nested = dir.file("nested");
  std::filesystem::create_directories(nested / "report.json");
  expect_one_line_refusal(run_bounded(60, "sweep --merge " + nested.string() + out),
                          "report.json is a folder, not a regular file", "a folder");
  EXPECT_FALSE(std::filesystem::exists(dir.file("merged"))) << "a refused merge wrote reports";
}

TEST(HostileInput, MutantsOverProcessesOutsideALauncherIsALaunchMistake) {
  // Outside mpirun the world has one process: every case ran at C = 1, most mutants "survived"
  // and the hunt exited 1 as if the checks had holes.
  // Open MPI never frees what MPI_Init allocates; under LeakSanitizer that would turn the exit
  // status into LSan's. Those leaks are Open MPI's, so this one run is not leak-checked.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const bool had_options = asan != nullptr;
  const std::string saved = had_options ? asan : "";
  ::setenv("ASAN_OPTIONS", (saved.empty() ? "" : saved + ":").append("detect_leaks=0").c_str(), 1);
  const CliRun run = run_bounded(120, "mutants --mpi --cases 1");
  if (had_options) {
    ::setenv("ASAN_OPTIONS", saved.c_str(), 1);
  } else {
    ::unsetenv("ASAN_OPTIONS");
  }
#ifdef CPLAB_TEST_HAVE_MPI
  expect_one_line_refusal(run, "start it under a launcher with two or more", "mutants --mpi");
#else
  expect_one_line_refusal(run, "--mpi needs a build with MPI", "mutants --mpi");
#endif
}

TEST(HostileInput, ReplayOnAnImplementationThatCannotRunHereSaysWhyOnStderr) {
  // The reason once went to stdout, after the case, with nothing on stderr and exit 2.
  const std::string packed = testsupport::first_layout(
      "a layout that shards at C > 1", [](const sim::LayoutDescriptor& layout) {
        return !layout.cp_off;  // every layout takes packed rows
      });
  const CliRun run =
      run_bounded(60, "replay --no-plan --impl gpu '" + packed + " cp=2 docs=5,3,8'");
  if (run.status == 0) GTEST_SKIP() << "skipped: a CUDA device is here, gpu runs";
  expect_one_line_refusal(run, "--impl gpu cannot run here: ", "replay --impl gpu");
}

TEST(HostileInput, CheckWithShardsButNoFilesNamesTheMissingFiles) {
  // "--shards --layout ..." once took --layout for a shard and said "--layout is required".
  ScratchDir dir;
  const std::string batch = dir.file("batch.pt");
  std::ofstream(batch) << "not read";
  const std::string layout = "--layout " + testsupport::a_plain_layout();
  for (const std::string& args : {"check --batch " + batch + " --cp 2 --shards " + layout,
                                  "check --batch " + batch + " --shards " + layout + " --cp 2",
                                  "check --batch " + batch + " " + layout + " --cp 2 --shards"}) {
    const CliRun run = run_bounded(60, args);
    expect_one_line_refusal(run, "--shards", args);
    EXPECT_EQ(run.err.find("--layout is required"), std::string::npos) << args << ": " << run.err;
  }
}

TEST(HostileInput, APictureOfMoreSlotsThanItCanDrawIsRefusedBeforeItIsKept) {
  // `layout --layout all --svg` at 16M tokens once kept every layout's every slot for the picture:
  // killed at 24 GB. A picture past kMaxPictureSlots is one line, exit 2, and no file.
  ScratchDir dir;
  const std::string svg = dir.file("all.svg");
  const std::string one = "--layout " + testsupport::a_plain_layout();
  for (const std::string& args : {"layout --layout all --cp 8 --seq-len 1048577 --svg " + svg,
                                  "layout " + one + " --cp 8 --seq-len 1048577 --svg " + svg,
                                  "explain " + one + " --cp 8 --seq-len 1048577 --format html"}) {
    const CliRun run = run_bounded(120, args);
    expect_one_line_refusal(run, "a layout picture draws every slot: at most 1048576", args);
    EXPECT_FALSE(std::filesystem::exists(svg)) << args;
  }
}

TEST(HostileInput, ThePicturesOfEveryLayoutAreBoundedTogether) {
  // Each picture of `layout --layout all --svg` at 2^20 slots was under the bound alone; all of
  // them together kept 4.8 GB and ended in bad_alloc after 70 s. The bound holds for their sum.
  ScratchDir dir;
  const std::string svg = dir.file("all.svg");
  for (const std::string& args :
       {"layout --layout all --cp 2 --seq-len 1048576 --svg " + svg,
        std::string("explain --layout all --cp 2 --seq-len 1048576 --format svg")}) {
    const CliRun run = run_bounded(120, args);
    expect_one_line_refusal(run, "at most 1048576 slots together", args);
    EXPECT_FALSE(std::filesystem::exists(svg)) << args;
  }
}

}  // namespace
}  // namespace cplab::clitest
