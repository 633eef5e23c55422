// A bug planted in a layout is caught, shrunk to a small case, and that case's replay string
// reproduces it. The plant is narrow on purpose — the map is wrong only for C = 3 and only on rows
// of at least 24 slots — so that finding it takes random search and a real shrink. It is planted
// in a plainly sharding layout (tests/support/layouts.hpp), whichever the registry holds.
#include <gtest/gtest.h>

#include "properties/case.hpp"
#include "properties/runner.hpp"
#include "sim/sim_implementation.hpp"
#include "tests/properties/test_seed.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

class PlantedBug final : public sim::SimImplementation {
 public:
  std::string name() const override { return "planted"; }

 protected:
  // Ranks 1 and 2 swap the second halves of their local orders (head-tail's tail chunks): a
  // permutation still, every rank still holds L/C slots.
  std::vector<std::int64_t> local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                                        std::int64_t rank) const override {
    std::vector<std::int64_t> index = SimImplementation::local_index(stream, map, rank);
    const std::int64_t cp = map.cp(), padded_len = map.padded_len();
    if (cp != 3 || padded_len < 24 || rank == 0) return index;
    const std::vector<std::int64_t> other =
        SimImplementation::local_index(stream, map, rank == 1 ? 2 : 1);
    const std::int64_t half = padded_len / (2 * cp);
    for (std::int64_t k = half; k < 2 * half; ++k) {
      index[static_cast<std::size_t>(k)] = other[static_cast<std::size_t>(k)];
    }
    return index;
  }
};

TEST(PlantedBug, IsCaughtShrunkAndReplayable) {
  const ImplementationInfo planted{
      .name = "planted",
      .summary = "second halves of ranks 1 and 2 swapped at C = 3, L >= 24",
      .make = [] { return std::make_unique<PlantedBug>(); }};
  const std::string layout = testsupport::a_plain_layout();
  const JobSpec job{&find_property("shard_then_gather_is_identity"), &layout_entry(layout),
                    &planted};
  RunOptions options;
  options.cases = 300;
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::failed)
      << "the planted bug survived " << result.cases << " cases";
  EXPECT_GT(result.shrinks, 0);

  // Shrunk to the bug's edge: C = 3 (nothing smaller shows it), a row of exactly 24 slots.
  const Case c = parse_case(result.counterexample);
  EXPECT_EQ(c.spec.cp, 3);
  EXPECT_EQ(c.spec.microbatches, 1);
  EXPECT_LE(c.seq_len, 24);
  EXPECT_GT(c.seq_len, 18);
  EXPECT_NE(result.message.find(layout + " cp=3"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("first wrong element"), std::string::npos) << result.message;

  // The replay string reproduces the failure exactly, and only with the bug.
  EXPECT_EQ(result.replay, replay_command("planted", job.property->name, c));
  PlantedBug bug;
  EXPECT_EQ(run_case(*job.property, c, bug).failure, result.message);
  const auto sim = find_implementation("sim").make();
  EXPECT_TRUE(run_case(*job.property, c, *sim).failure.empty());
}

}  // namespace
}  // namespace cplab::properties
