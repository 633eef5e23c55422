// magi's own property cases: its closed form gives SPEC §9's example 5 and refuses parameters
// without K; and a row of one-slot chunks at C = 64 scatters every rank's slots, so
// its Ulysses schedule runs past cplab's bound on one schedule (SPEC §13.2). cplab refuses such a
// schedule as bad input, so the schedule properties (12, 13) pass over it, tagged, rather than
// failing the sweep: a nightly sweep with a random seed drew exactly this case and went red.
#include <gtest/gtest.h>

#include <algorithm>

#include "properties/case.hpp"
#include "properties/property.hpp"
#include "properties/runner.hpp"
#include "sim/sim_implementation.hpp"
#include "tests/properties/closed_form_examples.hpp"

namespace cplab::properties {
namespace {

TEST(MagiProperties, a_schedule_past_the_bounds_is_no_case_of_the_schedule_properties) {
  const Case c = parse_case(
      "magi cp=64 m=2 K=1 mb=1 rows=1 S=367 docs=- vocab=2 pad_id=0 policy=spec shard_primary=1 "
      "primary=ids dim=1 dtype=b8 pos=none rowpos=arange left_pad=0 kdt=wide keys=- ignore=0 "
      "invalid=0 pad_content=0 seed=0");
  sim::SimImplementation sim;
  for (const char* name :
       {"ring_schedule_covers_mask_once", "attention_critical_path_is_balanced"}) {
    SCOPED_TRACE(name);
    const CaseOutcome out = run_case(find_property(name), c, sim);
    EXPECT_EQ(out.failure, "");
    const auto& tags = out.notes.tags;
    EXPECT_TRUE(std::any_of(tags.begin(), tags.end(), [](const std::string& t) {
      return t.find("past the schedule bounds") != std::string::npos;
    })) << ::testing::PrintToString(tags);
    // The algorithms within the bounds are still checked.
    EXPECT_TRUE(std::any_of(tags.begin(), tags.end(), [](const std::string& t) {
      return t.find("all-gather") != std::string::npos && t.find("past") == std::string::npos;
    })) << ::testing::PrintToString(tags);
  }
}

// The attention properties draw one algorithm per case; past the bounds it is no case of theirs
// either, and it is found before any input or reference is made (the float64 reference of this
// row takes minutes): `replay` refuses it as bad input through the property's refusal, a sweep's
// check passes over it, tagged.
TEST(MagiProperties, a_case_past_the_schedule_bounds_is_refused_by_the_attention_properties) {
  const Case c = parse_case("magi K=1 cp=64 rows=1 S=8192 seed=1");
  sim::SimImplementation sim;
  for (const char* name : {"cp_attention_matches_unsharded", "lse_merge_is_stable"}) {
    SCOPED_TRACE(name);
    const PropertyInfo& property = find_property(name);
    ASSERT_NE(property.refusal, nullptr);
    EXPECT_NE(property.refusal(c, sim).find("past cplab's schedule bounds"), std::string::npos);
    const CaseOutcome out = run_case(property, c, sim);
    EXPECT_EQ(out.failure, "");
    const auto& tags = out.notes.tags;
    EXPECT_TRUE(std::any_of(tags.begin(), tags.end(), [](const std::string& t) {
      return t.find("past the schedule bounds") != std::string::npos;
    })) << ::testing::PrintToString(tags);
    // Within the bounds nothing is refused.
    EXPECT_EQ(property.refusal(parse_case("magi K=1 cp=4 rows=1 S=64 seed=1"), sim), "");
  }
}

TEST(LayoutTable, MagiClosedFormGivesSpecExample5) {
  const std::vector<std::int64_t> ex5 = {32};
  expect_maps("magi", 4, 32, &ex5,
              {{0, 1, 2, 3, 28, 29, 30, 31},
               {4, 5, 6, 7, 24, 25, 26, 27},
               {8, 9, 10, 11, 20, 21, 22, 23},
               {12, 13, 14, 15, 16, 17, 18, 19}},
              4);
}

TEST(LayoutTable, MagiClosedFormRefusesParametersItCannotIndex) {
  const MapParams bad{.table = {0, 3, 8}, .unit = 0};  // no K
  EXPECT_THROW(sim::LayoutMap(*layout_entry("magi").descriptor, 2, 8, bad), Error);
}

}  // namespace
}  // namespace cplab::properties
