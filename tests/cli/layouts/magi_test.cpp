// magi's own CLI checks: its chunk size K (bounded so that K·C stays inside cplab's limits, or
// `auto`: MagiAttention's ceil(S / 8C) for short rows) and its chunk padding at C = 1, as the
// command line takes, refuses and prints them; and how `cplab schedule` treats its chunks (its
// own solver, not a ring; runs × runs blocks for Ulysses); and its chunks as `check --layout auto`
// finds them in another layout's shards.
#include "layouts/magi.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/check_fixture.hpp"
#include "tests/cli/schedule_json.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::CliRun;
using testsupport::expect_refusal;
using testsupport::expect_usage_error;
using testsupport::run_cplab;

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

// MagiAttention's own conventions as options: chunk padding even at C = 1, and the chunk size
// capped at ceil(S / (8·C)) for short rows.
TEST(CliMagiOptions, ChunkPaddingAtCpOneAndTheAutoChunkSize) {
  const auto padded_len = [](const std::string& args) -> std::int64_t {
    const auto run = run_cplab("layout --json --layout magi " + args);
    EXPECT_EQ(run.status, 0) << args << ": " << run.err;
    return run.status == 0 ? nlohmann::json::parse(run.out)["padded_seq_len"].get<std::int64_t>()
                           : -1;
  };
  EXPECT_EQ(padded_len("--cp 1 --chunk-size 4 --seq-len 10"), 10);  // C = 1: the identity
  EXPECT_EQ(padded_len("--cp 1 --chunk-size 4 --seq-len 10 --chunk-pad-at-cp1"), 12);
  EXPECT_EQ(padded_len("--cp 2 --chunk-size auto --seq-len 40"), 42);        // K = ceil(40/16) = 3
  EXPECT_EQ(padded_len("--cp 2 --chunk-size auto --seq-len 10000"), 10240);  // K = 512
  const auto explained = run_cplab("explain --layout magi --cp 2 --chunk-size auto --seq-len 40");
  EXPECT_NE(explained.out.find("magi cp=2 chunk_size=3"), std::string::npos) << explained.out;
  expect_usage_error(run_cplab("layout --layout magi --cp 2 --chunk-size 0 --seq-len 8"),
                     {"--chunk-size", "auto"});
}

// magi attends with its own solver, not by a ring: `--algo all` lists the ring as refused, with
// why, beside the algorithms it runs; `--algo ring` alone is one line.
TEST(CliSchedule, AllListsMagisRefusalOfTheRing) {
  const nlohmann::json j = schedule_json(
      "--layout magi --cp 2 --chunk-size 4 --doc-lens 9,7 "
      "--algo all");
  ASSERT_EQ(j["algos"].size(), 4u);
  EXPECT_EQ(j["algos"][0]["algo"], "all-gather");
  EXPECT_TRUE(j["algos"][0].contains("critical_path"));
  EXPECT_EQ(j["algos"][1]["algo"], "ring");
  EXPECT_NE(j["algos"][1]["refused"].get<std::string>().find("MagiAttention"), std::string::npos);
  // Ulysses: every rank computes every pair on its heads.
  const nlohmann::json& ulysses = j["algos"][2];
  EXPECT_EQ(ulysses["critical_path"].get<double>() * 2, ulysses["total_work"].get<double>());
  expect_usage_error(run_cplab("schedule --layout magi --cp 2 --seq-len 8 --algo ring"),
                     {"magi refuses ring"});
}

// magi's 512-token chunks make a million-token row 2048 runs; ulysses holds them all on every
// rank, runs × runs blocks: refused before they fill memory, listed as refused under `all`.
TEST(CliSchedule, TooManyBlocksIsRefused) {
  const std::string row = "schedule --layout magi --cp 8 --seq-len 1048576 ";
  expect_usage_error(run_cplab(row + "--algo ulysses"), {"more than 4194304 blocks"});
  const auto all = run_cplab(row + "--algo all");
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find("ulysses     refused: schedule: more than 4194304 blocks"),
            std::string::npos)
      << all.out;
  EXPECT_NE(all.out.find("all-gather      1"), std::string::npos) << all.out;
}

// On one causal row magi's 16 chunks (K = L / 2C) are head-tail's two chunks per rank: `check
// --layout auto` on the head-tail shards of a long row names magi among their aliases, found
// through its closed-form map without planning it.
TEST_F(CliCheck, AutoNamesMagiAnAliasOfHeadTailOnALongRow) {
  const nlohmann::json aliases = head_tail_long_row_aliases();
  EXPECT_TRUE(lists(aliases, "magi cp=8 chunk_size=3465")) << aliases.dump(1);
}

}  // namespace
}  // namespace cplab::testing
