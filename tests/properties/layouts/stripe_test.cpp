// stripe's own property cases: its CP attention worked case (f32, the shifted diagonal of whole
// buffers) passes within the derived tolerance.
#include <gtest/gtest.h>

#include "tests/properties/cp_attention_cases.hpp"

namespace cplab::properties {
namespace {

INSTANTIATE_TEST_SUITE_P(Stripe, CpAttentionOnSim,
                         ::testing::Values("stripe cp=3 dtype=f32 rows=1 S=24 dim=2 seed=9"));

}  // namespace
}  // namespace cplab::properties
