// `cplab check` end to end, its plumbing whatever the layout: unreadable input exits 2 with one
// line. The layouts' own checks (clean shards, planted bugs, --layout auto naming them) are in
// layouts/ID_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/cli/check_fixture.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;

// Any layout: the files are refused before one is planned.
TEST_F(CliCheck, UnreadableInputExitsTwoWithOneLine) {
  const std::string layout = " --layout " + testsupport::a_plain_layout();
  io::save_torch_tensors(clean.ranks[0], dir.file("rank0.pt"));
  {
    std::ofstream junk(dir.file("junk.pt"));
    junk << "not a zip";
  }
  const std::string batch = " --batch " + dir.file("batch.pt");
  expect_usage_error(run_cplab("check" + layout + " --cp 2" + batch + " --shards " +
                               dir.file("rank0.pt") + " " + dir.file("junk.pt")),
                     {"junk.pt"});
  expect_usage_error(
      run_cplab("check" + layout + " --cp 2" + batch + " --shards " + dir.file("rank0.pt")),
      {"--shards", "1 files", "--cp 2"});
  expect_usage_error(run_cplab("check --layout nope --cp 2" + batch + " --shards a b"), {"nope"});
  expect_usage_error(
      run_cplab("check" + layout + " --cp 2 --batch " + dir.file("junk.pt") + " --shards a b"),
      {"junk.pt"});
}

}  // namespace
}  // namespace cplab::testing
