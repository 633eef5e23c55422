// magi's own CLI checks: its chunk size K, bounded so that K·C stays inside cplab's limits, or
// `auto` (MagiAttention's ceil(S / 8C) for short rows), as the command line refuses them.
#include "layouts/magi.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>

#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::CliRun;
using testsupport::run_cplab;

// A refusal: exit 2, nothing on stdout, and this one line on stderr (without the "file.cpp:NN: "
// of the check that raised it, which moves with the code).
void expect_refusal(const CliRun& run, const std::string& line, const std::string& args) {
  static const std::regex location(R"([A-Za-z0-9_]+\.(cpp|hpp):[0-9]+: )");
  std::string err = run.err;
  if (!err.empty() && err.back() == '\n') err.pop_back();
  EXPECT_EQ(run.status, 2) << args << "\n" << run.err;
  EXPECT_TRUE(run.out.empty()) << args << ": " << run.out;
  EXPECT_EQ(testsupport::line_count(run.err), 1) << args << ": " << run.err;
  EXPECT_EQ(std::regex_replace(err, location, ""), line) << args;
}

TEST(Limits, MagiAutomaticChunkSizeNeverWraps) {
  // ceil(S / 8C) for any S and C the types hold: S + 8C - 1 is never formed.
  EXPECT_EQ(layouts::magi_auto_chunk_size(512, 17, 1), 3);
  EXPECT_EQ(layouts::magi_auto_chunk_size(512, 16, 1), 2);
  EXPECT_EQ(layouts::magi_auto_chunk_size(512, 0, 4), 1);
  EXPECT_EQ(layouts::magi_auto_chunk_size(512, INT64_MAX, 1024), 512);
  EXPECT_EQ(layouts::magi_auto_chunk_size(INT64_MAX, INT64_MAX, 1), INT64_MAX / 8 + 1);
  EXPECT_EQ(layouts::magi_auto_chunk_size(512, INT64_MAX, INT64_MAX), 1);
}

// K past its bound at C = 4 (K·C would pass 2^64) is one line naming the flag, the range and
// `auto`.
TEST(BadInput, MagiChunkSizePastItsBound) {
  const std::string args =
      "layout --layout magi --cp 4 --chunk-size 4611686018427387904 --seq-len 5";
  expect_refusal(run_cplab(args),
                 "cplab: error: --chunk-size 4611686018427387904: magi chunk size K must be in [1, "
                 "4194304] at cp=4, or auto",
                 args);
}

TEST(BadInput, MagisAutomaticChunkSizeBoundsTheRowFirst) {
  // S near 2^63 once wrapped magi's automatic K.
  const std::string args =
      "explain --layout magi --cp 1024 --chunk-size auto --seq-len 9223372036854775807";
  expect_refusal(run_cplab(args),
                 "cplab: error: a row of S=9223372036854775807 tokens is outside [0, 16777216] "
                 "(cplab's limit per row)",
                 args);
  // A row magi's automatic K is computed for (ceil(S / 8C) without forming S + 8C - 1).
  const CliRun ok = run_cplab("layout --layout magi --cp 2 --chunk-size auto --seq-len 4096");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace
}  // namespace cplab::testing
