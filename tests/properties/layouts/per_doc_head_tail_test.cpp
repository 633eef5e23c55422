// per-doc-head-tail's own property cases, end to end: `cplab replay` of SPEC §9.10's example
// prints its slots with every property holding, the caller's padding inside a document travels in
// the case string, a row the caller did not pad is refused, and the document-major mutant fails
// the example's balance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "properties/property.hpp"
#include "tests/support/cli.hpp"

namespace cplab::properties {
namespace {

using testsupport::CliRun;
using testsupport::run_cplab;

TEST(ReplayCli, PerDocHeadTailRowsComeAsDocs) {
  // SPEC §9.10: documents 8 and 4 on a row of S = 12, C = 2, every property on sim.
  const CliRun good = run_cplab("replay 'per-doc-head-tail cp=2 docs=8,4'");
  EXPECT_EQ(good.status, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("rank 0: slots [0 1 6 7 8 11]"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find(fmt::format("{0} of {0} properties hold", property_table().size())),
            std::string::npos)
      << good.out;
  // The caller's own padding inside a document travels in the case string as 3+1.
  const CliRun padded = run_cplab("replay 'per-doc-head-tail cp=2 docs=3+1,4'");
  EXPECT_EQ(padded.status, 0) << padded.out << padded.err;
  EXPECT_NE(padded.out.find("rank 0: slots [0 3 4 7] real 3"), std::string::npos) << padded.out;
  // A row the caller did not pad is bad input, and the document-major mutant fails the example.
  const CliRun refused = run_cplab("replay 'per-doc-head-tail cp=2 docs=5,3'");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("not a multiple of 2C=4"), std::string::npos) << refused.err;
  const CliRun mutant = run_cplab(
      "replay --impl per_doc_document_major --property causal_work_is_balanced "
      "'per-doc-head-tail cp=2 docs=8,4'");
  EXPECT_EQ(mutant.status, 1) << mutant.out;
  EXPECT_NE(mutant.out.find("(whole row: [25, 21])"), std::string::npos) << mutant.out;
}

}  // namespace
}  // namespace cplab::properties
