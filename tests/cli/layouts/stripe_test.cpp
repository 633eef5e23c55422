// stripe's own CLI checks: how `cplab schedule` blocks its buffers (each rank's whole buffer one
// block, its slots never merged into runs, masked doc-causally on pads) and the bound on its JSON
// (every slot its own range).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/schedule_json.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;
using testsupport::ScratchDir;

TEST(CliSchedule, StripeMergesNoSlotsAndReadsDocCausalOnPads) {
  const nlohmann::json j = schedule_json("--layout stripe --cp 2 --seq-len 7 --algo ring");
  const nlohmann::json& rank1 = j["steps"][0]["ranks"][1];
  EXPECT_EQ(rank1["blocks"][0]["mask"], "doc-causal");
  EXPECT_EQ(rank1["blocks"][0]["q"], nlohmann::json::parse("[[1,2],[3,4],[5,6],[7,8]]"));
}

// Stripe lists every slot as its own range: the JSON of a million tokens is refused before any
// output (the picture included), not written at hundreds of megabytes.
TEST(CliSchedule, JsonPastItsBoundIsRefusedBeforeAnyOutput) {
  ScratchDir dir;
  expect_usage_error(run_cplab("schedule --layout stripe --cp 8 --seq-len 1048576 --algo all "
                               "--json --svg " +
                               dir.file("s.svg")),
                     {"--json: the output would list more than 16777216 slot ranges"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.svg")));
}

}  // namespace
}  // namespace cplab::testing
