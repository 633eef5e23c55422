#pragma once
// A helper of the verbs tests (verbs_test.cpp and the layouts' own files): what a sharded located
// key must hold.
#include <cstdint>

#include "tests/reference/support.hpp"

namespace cplab::testing {

// What local token k of row b on rank r must hold for a located key: the caller token, or `pad`.
inline double expected_local(const RowPlan& row, std::int64_t caller_row, std::int64_t r,
                             std::int64_t k, double pad) {
  const std::int64_t caller = row.caller_pos[row.index[r][k]];
  return caller >= 0 ? token_value(caller_row, caller) : pad;
}

}  // namespace cplab::testing
