// per-doc-head-tail's own checks end to end: on one document it is head-tail, so `cplab check
// --layout auto` finds it in head-tail's shards of a long row; and `cplab replay` of SPEC §9.10's
// example prints its slots with every property holding, the caller's padding inside a document
// travels in the case string, a row the caller did not pad is refused, and the document-major
// mutant fails the example's balance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "tests/cli/check_fixture.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

// A BSHD row is one document, which per-doc-head-tail cuts as head-tail cuts the row: `check
// --layout auto` on the head-tail shards of a long row names it among their aliases, found
// through its closed-form map without planning it.
TEST_F(CliCheck, AutoNamesPerDocHeadTailAnAliasOfHeadTailOnALongRow) {
  const nlohmann::json aliases = head_tail_long_row_aliases();
  EXPECT_TRUE(lists(aliases, "per-doc-head-tail cp=8")) << aliases.dump(1);
}

TEST(ReplayCli, PerDocHeadTailRowsComeAsDocs) {
  // SPEC §9.10: documents 8 and 4 on a row of S = 12, C = 2, every property on sim.
  const testsupport::CliRun good =
      testsupport::run_cplab("replay 'per-doc-head-tail cp=2 docs=8,4'");
  EXPECT_EQ(good.status, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("rank 0: slots [0 1 6 7 8 11]"), std::string::npos) << good.out;
  EXPECT_TRUE(testsupport::every_property_holds(good.out)) << good.out;
  // The caller's own padding inside a document travels in the case string as 3+1.
  const testsupport::CliRun padded =
      testsupport::run_cplab("replay 'per-doc-head-tail cp=2 docs=3+1,4'");
  EXPECT_EQ(padded.status, 0) << padded.out << padded.err;
  EXPECT_NE(padded.out.find("rank 0: slots [0 3 4 7] real 3"), std::string::npos) << padded.out;
  // A row the caller did not pad is bad input, and the document-major mutant fails the example.
  const testsupport::CliRun refused =
      testsupport::run_cplab("replay 'per-doc-head-tail cp=2 docs=5,3'");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("not a multiple of 2C=4"), std::string::npos) << refused.err;
  const testsupport::CliRun mutant = testsupport::run_cplab(
      "replay --impl per_doc_document_major --property causal_work_is_balanced "
      "'per-doc-head-tail cp=2 docs=8,4'");
  EXPECT_EQ(mutant.status, 1) << mutant.out;
  EXPECT_NE(mutant.out.find("(whole row: [25, 21])"), std::string::npos) << mutant.out;
}

}  // namespace
}  // namespace cplab::testing
