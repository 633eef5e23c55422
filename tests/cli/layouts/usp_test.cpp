// usp's own checks end to end: `cplab check --layout auto` finds usp's ring degree, an option only
// usp reads, in the shards usp's reference plan gives, and usp at R = C in head-tail's shards of a
// long row; the ring degree's bounds on the command line; and `cplab schedule` of its ring of
// Ulysses groups.
#include "layouts/usp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/check_fixture.hpp"
#include "tests/cli/schedule_json.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_refusal;
using testsupport::expect_usage_error;
using testsupport::run_cplab;

// usp's ring degree R (each R dividing C) is searched too, not only the default.
TEST_F(CliCheck, AutoFindsUspsRingDegree) {
  const Batch batch = bshd_batch(32);
  io::save_torch_batch(batch, dir.file("batch.pt"));
  LayoutSpec usp;
  usp.layout = "usp";
  usp.cp = 4;
  layouts::usp_ring_degree.set(usp, 2);
  const auto found_usp = check(reference_shards(usp, batch), "auto", "", 4);
  EXPECT_EQ(found_usp.status, 0) << found_usp.out.dump(1) << found_usp.err;
  EXPECT_EQ(found_usp.out["spec"], "usp cp=4 ring_degree=2") << found_usp.out.dump(1);
}

// On one causal row usp with R = C (one Ulysses group per rank, every rank a ring) is head-tail:
// `check --layout auto` on the head-tail shards of a long row names it among their aliases.
TEST_F(CliCheck, AutoNamesUspAnAliasOfHeadTailOnALongRow) {
  const nlohmann::json aliases = head_tail_long_row_aliases();
  EXPECT_TRUE(lists(aliases, "usp cp=8 ring_degree=8")) << aliases.dump(1);
}

// R past C's bound is refused before any file is read, in one line.
TEST(BadInput, CheckUspRingDegreeOutsideItsLimit) {
  const std::string args =
      "check --batch /nonexistent.pt --layout auto --cp 2 --shards a.pt b.pt --ring-degree 1025";
  expect_refusal(run_cplab(args),
                 "cplab: error: --ring-degree 1025: usp ring degree R must be in [1, 1024] at cp=2",
                 args);
}

TEST(CliSchedule, UspRingsOverItsGroups) {
  const nlohmann::json j =
      schedule_json("--layout usp --cp 4 --ring-degree 2 --seq-len 32 --algo usp --heads 4");
  EXPECT_EQ(j["ring_degree"], 2);
  EXPECT_EQ(j["ulysses_degree"], 2);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][0]["exchange"], "all_to_all");
  EXPECT_EQ(j["steps"][1]["exchange"], "send_recv");
  EXPECT_EQ(j["critical_path"].get<double>(), j["ideal"].get<double>());
}

// R must divide C (U = C / R): a ring degree that does not is one line.
TEST(CliSchedule, UspsRingDegreeMustDivideTheCpSize) {
  expect_usage_error(
      run_cplab("schedule --layout usp --cp 4 --ring-degree 3 --seq-len 8 --algo usp"),
      {"ring degree R=3"});
}

}  // namespace
}  // namespace cplab::testing
