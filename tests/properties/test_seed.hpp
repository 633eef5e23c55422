#pragma once
// Seeds and budgets of the property tests, RC_PARAMS-compatible: `RC_PARAMS="seed=42
// max_success=200"` reruns a test with that seed and that many cases per job, as RapidCheck's own
// gtest integration would. Without RC_PARAMS, a fixed seed keeps CI reproducible.
#include <rapidcheck.h>

#include <cstdint>
#include <cstdlib>

namespace cplab::properties {

inline bool rc_params_set() { return std::getenv("RC_PARAMS") != nullptr; }

inline std::uint64_t test_seed() {
  return rc_params_set() ? rc::detail::configuration().testParams.seed : 0x5eedc0de;
}

// RC_PARAMS' max_success when given, else the test's own budget.
inline std::int64_t test_cases(std::int64_t fallback) {
  return rc_params_set() ? rc::detail::configuration().testParams.maxSuccess : fallback;
}

}  // namespace cplab::properties
