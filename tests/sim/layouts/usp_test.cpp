// usp on the twin: what its closed form answers when handed a ring degree that does not divide C,
// and its CP attention schedule (rings over Ulysses groups).
#include <gtest/gtest.h>

#include "layouts/layout_map.hpp"
#include "tests/sim/schedule_fixtures.hpp"
#include "tests/sim/support.hpp"

namespace cplab::simtest {
namespace {

// usp's closed form handed a ring degree that does not divide C (its parameter check gone).
TEST(LayoutMap, usp_checks_what_its_closed_form_answers) {
  sim::LayoutDescriptor usp = sim::layout_descriptor("usp");
  usp.map.prepare = nullptr;
  const sim::LayoutMap ring_of_three(usp, 4, 16, MapParams{.table = {}, .unit = 3});
  EXPECT_NE(error_of([&] {
              ring_of_three.owner(12);
            }).find("usp closed form: owner(12) = rank -1 offset 2, outside cp=4 ranks"),
            std::string::npos);
}

}  // namespace
}  // namespace cplab::simtest

namespace cplab::sim {
namespace {

using namespace schedule_test;

TEST(AttentionSchedule, UspRingsOverUlyssesGroups) {
  const LayoutSpec spec = spec_of("usp", 4, 2);
  const AttentionShape shape{.heads = 4, .kv_heads = 2, .head_dim = 8, .dtype = DType::bf16};
  const AttentionSchedule s = schedule_of(spec, causal_row(spec, 32), AttentionAlgo::usp, shape);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].exchange, sim::Exchange::all_to_all);
  EXPECT_EQ(s.steps[1].exchange, sim::Exchange::send_recv);
  EXPECT_EQ(s.ring_degree, 2);
  EXPECT_EQ(s.ulysses_degree, 2);
  const RankStep& r3 = s.steps[1].ranks[3];  // ring rank 1 holds group 0's keys at step 1
  EXPECT_EQ(r3.queries, (std::vector<BufferPiece>{{2, {0, 8}}, {3, {0, 8}}}));
  EXPECT_EQ(r3.keys, (std::vector<BufferPiece>{{0, {0, 8}}, {1, {0, 8}}}));
  EXPECT_EQ(r3.heads, 2);
  for (const ScheduleStep& step : s.steps)
    for (const RankStep& rank : step.ranks) EXPECT_EQ(rank.work, step.ranks[0].work);
}

}  // namespace
}  // namespace cplab::sim
