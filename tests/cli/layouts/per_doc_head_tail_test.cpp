// per-doc-head-tail's own checks end to end: on one document it is head-tail, so `cplab check
// --layout auto` finds it in head-tail's shards of a long row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "tests/cli/check_fixture.hpp"

namespace cplab::testing {
namespace {

// A BSHD row is one document, which per-doc-head-tail cuts as head-tail cuts the row: `check
// --layout auto` on the head-tail shards of a long row names it among their aliases, found
// through its closed-form map without planning it.
TEST_F(CliCheck, AutoNamesPerDocHeadTailAnAliasOfHeadTailOnALongRow) {
  constexpr std::int64_t kSeq = 55440, kRanks = 8;
  io::save_torch_batch(bshd_batch(kSeq), dir.file("batch.pt"));
  const auto run = check(head_tail_zero_pad_shards(kSeq, kRanks), "auto", "", kRanks);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json& aliases = run.out["also_explained_by"];
  EXPECT_NE(std::find(aliases.begin(), aliases.end(), nlohmann::json("per-doc-head-tail cp=8")),
            aliases.end())
      << run.out.dump(1);
}

}  // namespace
}  // namespace cplab::testing
