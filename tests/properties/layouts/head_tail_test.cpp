// head-tail's own property-machinery facts: its closed form gives SPEC §9's head-tail example, and
// its BSHD rows shrink toward its unit's multiple (2C); its zigzag's CP attention: a worked case
// (two rows, bf16), two rows of Ulysses send what the schedules count in either dtype, and its
// merges of a query's two chunks pass the unstable merge at moderate logits and fail it at large.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "properties/generators.hpp"
#include "properties/runner.hpp"
#include "tests/properties/closed_form_examples.hpp"
#include "tests/properties/cp_attention_cases.hpp"

namespace cplab::properties {
namespace {

TEST(LayoutTable, HeadTailClosedFormGivesSpecExample) {
  expect_maps("head-tail", 4, 16, nullptr,
              {{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}});
}

TEST(Generators, HeadTailBshdShrinksGoTowardTheUnitsMultiple) {
  // BSHD rows toward the unit's multiple (head-tail: 2C = 6).
  const std::vector<Case> bshd = domain_shrinks(parse_case("head-tail cp=3 S=23 rows=2 seed=1"));
  for (std::int64_t len : {22, 19, 18, 11}) {
    EXPECT_TRUE(std::any_of(bshd.begin(), bshd.end(), [&](const Case& s) {
      return s.seq_len == len && s.spec.cp == 3;
    })) << len;
  }
}

INSTANTIATE_TEST_SUITE_P(HeadTail, CpAttentionOnSim,
                         ::testing::Values("head-tail cp=4 dtype=bf16 rows=2 S=48 dim=4 seed=3"));

TEST(CpAttentionBytes, HeadTailTwoRowsOfUlyssesScaleWithTheDtypeAsScheduled) {
  expect_bytes_scale_as_scheduled("head-tail cp=4 rows=2 S=16 dim=3", sim::AttentionAlgo::ulysses,
                                  4, 4);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& line : lines) s += line + "\n";
  return s;
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

}  // namespace
}  // namespace cplab::properties
