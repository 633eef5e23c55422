// CP attention by schedule on sim (SPEC §13): worked cases of every algorithm pass within the
// derived tolerance, with what they measured against it printed; a misrouted ring names the step
// and the rank; and the stable merge's property fails the unstable merge at large logits.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>

#include "properties/harness.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/runner.hpp"
#include "properties/sweep.hpp"
#include "tests/properties/test_seed.hpp"

namespace cplab::properties {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& line : lines) s += line + "\n";
  return s;
}

class CpAttentionOnSim : public ::testing::TestWithParam<const char*> {};

TEST_P(CpAttentionOnSim, MatchesUnshardedWithinTheDerivedTolerance) {
  const auto sim = find_implementation("sim").make();
  for (const char* property : {"cp_attention_matches_unsharded", "lse_merge_is_stable"}) {
    const CaseOutcome out = run_case(find_property(property), parse_case(GetParam()), *sim);
    EXPECT_EQ(out.failure, "") << property;
    // What the case measured against its tolerance (the last note), for the record.
    std::cout << property << " " << GetParam() << ": " << out.notes.notes.back() << "\n";
  }
}

// Every algorithm: ring and all-gather and Ulysses on head-tail, thd and contiguous; usp's two
// levels at R = 2, U = 2; bf16, f16 and f32; GQA drawn from the seed.
INSTANTIATE_TEST_SUITE_P(Cases, CpAttentionOnSim,
                         ::testing::Values("head-tail cp=4 dtype=bf16 rows=2 S=48 dim=4 seed=3",
                                           "usp cp=4 R=2 dtype=bf16 rows=1 S=40 dim=4 seed=5",
                                           "thd cp=3 dtype=bf16 docs=13,7+1,20 dim=3 seed=11",
                                           "contiguous cp=2 dtype=f16 rows=1 S=30 dim=4 seed=2",
                                           "stripe cp=3 dtype=f32 rows=1 S=24 dim=2 seed=9"));

// Ulysses with fewer KV heads than ranks repeats them (SPEC §10.5): their gradients come back
// summed over the ranks that held a copy. The seeds draw such cases among others.
TEST(CpAttentionHeads, RepeatedKvHeadsPassOnEveryAlgorithm) {
  const auto sim = find_implementation("sim").make();
  int repeated = 0;
  for (int seed = 0; seed < 24; ++seed) {
    const Case c =
        parse_case(fmt::format("contiguous cp=4 dtype=bf16 rows=1 S=12 dim=2 seed={}", seed));
    const CaseOutcome out = run_case(find_property("cp_attention_matches_unsharded"), c, *sim);
    EXPECT_EQ(out.failure, "");
    for (const std::string& tag : out.notes.tags) {
      if (tag.find("H_kv=1") != std::string::npos || tag.find("H_kv=2") != std::string::npos)
        ++repeated;
    }
  }
  EXPECT_GT(repeated, 0) << "no case drew fewer KV heads than ranks";
}

TEST(CpAttentionRouting, AReversedBackwardRingNamesTheStepAndTheRank) {
  const auto broken = find_implementation("attention_backward_ring_reversed").make();
  const CaseOutcome out = run_case(find_property("cp_attention_matches_unsharded"),
                                   parse_case("contiguous cp=3 dtype=f32 rows=1 S=6"), *broken);
  EXPECT_NE(out.failure.find("cp_attention backward: at step 1 rank 0 holds keys rank 1 local "
                             "[0, 2); the schedule says rank 2 local [0, 2)"),
            std::string::npos)
      << out.failure;
}

TEST(CpAttentionStability, TheUnstableMergePassesAtModerateLogitsAndFailsAtLarge) {
  const auto broken = find_implementation("attention_lse_merge_unstable").make();
  const Case c = parse_case("head-tail cp=4 dtype=f32 rows=1 S=32 dim=4 seed=1");
  const CaseOutcome moderate =
      run_case(find_property("cp_attention_matches_unsharded"), c, *broken);
  EXPECT_EQ(moderate.failure, "") << joined(moderate.notes.notes);
  const CaseOutcome large = run_case(find_property("lse_merge_is_stable"), c, *broken);
  EXPECT_NE(large.failure, "");
}

// bf16's dK bound can be as large as a dK that cancels (SPEC §13.3), so a 2× gradient error is
// f32's to catch: a job of the default size declares f32 at C > 1 as coverage and draws it.
TEST(CpAttentionCoverage, EveryJobDrawsF32CasesAtCAboveOne) {
  const JobSpec job{&find_property("cp_attention_matches_unsharded"), &layout_entry("head-tail"),
                    &find_implementation("sim")};
  RunOptions options;
  options.cases = kDefaultCasesPerJob;
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::passed) << result.message;
  int declared = 0;
  for (const auto& [name, count] : result.combinations) {
    if (name.rfind("f32 · ", 0) != 0) continue;
    ++declared;
    EXPECT_GT(count, 0) << name;
  }
  EXPECT_GT(declared, 0) << "f32 is not declared as coverage";
}

}  // namespace
}  // namespace cplab::properties
