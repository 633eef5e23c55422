// head-tail's own GPU-path host tests: its worked examples of the shifted loss's target selection
// (SPEC example 7), simulated for every rank as the device runs it (shifted_target_fixtures.hpp).
#include <gtest/gtest.h>

#include "gpu/host/shifted_target.hpp"
#include "reference/plan.hpp"
#include "tests/gpu/shifted_target_fixtures.hpp"

namespace cplab::gpu {
namespace {

using shifted_target_fixtures::simulate;

TEST(ShiftedTarget, spec_example_7_head_tail_across_ranks) {
  LayoutSpec spec;
  spec.layout = "head-tail";
  spec.cp = 2;
  const RowPlan bshd = reference::plan_row(spec, 16);
  std::vector<std::int64_t> t(16);
  for (std::int64_t g = 0; g < 16; ++g) t[g] = g;  // label of slot g is "t_g"
  const auto whole_row = simulate(spec, bshd, t);
  EXPECT_EQ(whole_row[0].label, (std::vector<std::int64_t>{1, 2, 3, 4, 13, 14, 15, kIgnoreLabel}));
  EXPECT_EQ(whole_row[1].label, (std::vector<std::int64_t>{5, 6, 7, 8, 9, 10, 11, 12}));

  // Documents [0, 8) and [8, 16): r1's 4th target (t8 opens document 2) becomes none.
  const std::vector<std::int64_t> docs = {8, 8};
  const RowPlan packed = reference::plan_row(spec, 16, &docs);
  const auto by_document = simulate(spec, packed, t);
  EXPECT_EQ(by_document[1].label,
            (std::vector<std::int64_t>{5, 6, 7, kIgnoreLabel, 9, 10, 11, 12}));
  EXPECT_EQ(by_document[0].label, whole_row[0].label);
}

}  // namespace
}  // namespace cplab::gpu
