// contiguous's own property cases: its CP attention worked case (f16) passes within the derived
// tolerance.
#include <gtest/gtest.h>

#include "tests/properties/cp_attention_cases.hpp"

namespace cplab::properties {
namespace {

INSTANTIATE_TEST_SUITE_P(Contiguous, CpAttentionOnSim,
                         ::testing::Values("contiguous cp=2 dtype=f16 rows=1 S=30 dim=4 seed=2"));

}  // namespace
}  // namespace cplab::properties
