// thd's own property-machinery facts: its closed form gives SPEC §9's examples 3 and 4 and refuses
// bounds it cannot index; a job of property 2 counts thd's own combinations (packed rows only);
// its document-major mutant is a balance-only bug; its domain shrinks step toward 2C's
// multiples of a document; and its CP attention worked case (documents, one padded by the
// caller) passes within the derived tolerance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "properties/generators.hpp"
#include "properties/harness.hpp"
#include "properties/mutant_hunt.hpp"
#include "properties/runner.hpp"
#include "properties/sweep.hpp"
#include "tests/properties/closed_form_examples.hpp"
#include "tests/properties/cp_attention_cases.hpp"
#include "tests/properties/test_seed.hpp"

namespace cplab::properties {
namespace {

TEST(LayoutTable, ThdClosedFormGivesSpecExamples3And4) {
  const std::vector<std::int64_t> ex3 = {5, 3, 8}, ex4 = {4, 12};
  expect_maps("thd", 2, 16, &ex3,
              {{0, 1, 6, 7, 8, 11, 12, 13, 18, 19}, {2, 3, 4, 5, 9, 10, 14, 15, 16, 17}});
  expect_maps("thd", 2, 16, &ex4, {{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}});
}

TEST(LayoutTable, ThdClosedFormRefusesParametersItCannotIndex) {
  const MapParams bad{.table = {0, 3, 8}, .unit = 0};  // 3 is not a multiple of 2C
  EXPECT_THROW(sim::LayoutMap(*layout_entry("thd").descriptor, 2, 8, bad), Error);
}

TEST(SweepCoverage, AJobCountsEveryCombinationItsPropertyDeclares) {
  const JobSpec job{&find_property("shard_then_gather_is_identity"), &layout_entry("thd"),
                    &find_implementation("sim")};
  RunOptions options;
  options.cases = 120;
  options.seed = 11;
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::passed) << result.message;
  // thd: packed rows only, each THD form × 3 dtype classes × 4 C classes, the padded-length forms
  // × 3 C classes above 1, the batch keys × 4 and narrow keys once.
  EXPECT_EQ(result.combinations.size(), 3u * 12 + 2 * 3 + 4 + 1);
  // Every other case strides over the 12 cells: each THD form meets every cell.
  for (const auto& [name, count] : result.combinations) {
    if (name.rfind("THD", 0) == 0) {
      EXPECT_GT(count, 0) << name;
    }
  }
  EXPECT_TRUE(result.combinations.count("THD fill · packed · byte · C>=8"));
}

// THD laid out document-major is a balance-only bug (every token still held once, loss and
// attention still right): the load-balance property catches it on its own, not only the index-map
// comparison. (magi_ties_reversed is not such a bug for this property: equal-area chunks trade
// places without changing any rank's work, so only the assignment check of property 1 sees it.)
TEST(BalanceOnlyMutant, ThdDocumentMajorIsKilledByTheLoadBalanceProperty) {
  const JobSpec job{&find_property("causal_work_is_balanced"), &layout_entry("thd"),
                    &find_implementation("thd_document_major")};
  RunOptions options;
  options.cases = kDefaultHuntCases;
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::failed);
  EXPECT_NE(result.message.find(" work "), std::string::npos) << result.message;
  // SPEC §9 example 4 (documents of 4 and 12 tokens, C = 2): the layout SPEC calls the bug.
  const auto broken = job.impl->make();
  const CaseOutcome example = run_case(*job.property, parse_case("thd cp=2 docs=4,12"), *broken);
  EXPECT_NE(example.failure.find("unequal work"), std::string::npos) << example.failure;
  const auto sim = find_implementation("sim").make();
  EXPECT_EQ(run_case(*job.property, parse_case("thd cp=2 docs=4,12"), *sim).failure, "");
}

TEST(Generators, DomainShrinksTakeOneDocumentOrTokenAndEverySmallerC) {
  const Case c = parse_case("thd cp=5 docs=13+2,7,27 S=50 vocab=9 seed=4");
  const std::vector<Case> shrinks = domain_shrinks(c);
  const auto has = [&](const std::string& line) {
    const Case want = parse_case(line);
    return std::any_of(shrinks.begin(), shrinks.end(), [&](const Case& s) { return s == want; });
  };
  EXPECT_TRUE(has("thd cp=5 docs=7,27 S=50 vocab=9 seed=4"));       // a document removed
  EXPECT_TRUE(has("thd cp=5 docs=13+2,7,26 S=50 vocab=9 seed=4"));  // one token shorter
  EXPECT_TRUE(has("thd cp=5 docs=13+2,7,21 S=50 vocab=9 seed=4"));  // one past 2C's multiple
  EXPECT_TRUE(has("thd cp=5 docs=13+2,7,20 S=50 vocab=9 seed=4"));  // to 2C's multiple
  EXPECT_TRUE(has("thd cp=5 docs=13+1,7,27 S=50 vocab=9 seed=4"));  // a padding slot fewer
  EXPECT_TRUE(has("thd cp=5 docs=13+2,7,27 S=49 vocab=9 seed=4"));  // row padding, one slot
  for (std::int64_t cp = 1; cp < 5; ++cp) {
    EXPECT_TRUE(has(fmt::format("thd cp={} docs=13+2,7,27 S=50 vocab=9 seed=4", cp))) << cp;
  }
  // C last, smallest first.
  EXPECT_EQ(shrinks.back().spec.cp, 4);
  EXPECT_EQ(shrinks[shrinks.size() - 4].spec.cp, 1);
}

INSTANTIATE_TEST_SUITE_P(Thd, CpAttentionOnSim,
                         ::testing::Values("thd cp=3 dtype=bf16 docs=13,7+1,20 dim=3 seed=11"));

}  // namespace
}  // namespace cplab::properties
