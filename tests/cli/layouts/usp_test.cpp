// usp's own checks end to end: `cplab check --layout auto` finds usp's ring degree, an option only
// usp reads, in the shards usp's reference plan gives.
#include "layouts/usp.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/check_fixture.hpp"

namespace cplab::testing {
namespace {

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

}  // namespace
}  // namespace cplab::testing
