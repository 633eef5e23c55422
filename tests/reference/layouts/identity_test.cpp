// identity (CP off): it shards nothing, so it refuses any C above 1.
#include "reference/plan.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::plan_row;

TEST(SpecErrors, IdentityRefusesCpAboveOne) {
  EXPECT_ERROR(plan_row(make_spec("identity", 2), 8), "identity", "cp=2");
}

}  // namespace
}  // namespace cplab::testing
