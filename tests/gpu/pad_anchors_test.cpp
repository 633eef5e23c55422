// Continued position ids in closed form per token against the sequential rule of SPEC §2 (each
// added slot is the slot before plus one; the stream starts at 0).
#include "gpu/host/pad_anchors.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace cplab::gpu {
namespace {

TEST(PadAnchors, closed_form_equals_the_sequential_continuation) {
  // Caller slots hold caller positions 0..; -1 marks added slots: at the start, inside (thd's
  // document padding) and at the end.
  const std::vector<std::int64_t> caller_pos = {-1, -1, 0, 1, 2, -1, -1, 3, 4, -1, 5, -1, -1, -1};
  auto caller_value = [](std::int64_t c) { return 50 + 3 * c; };  // caller position ids, any values
  std::vector<std::int64_t> sequential(caller_pos.size());
  for (std::size_t g = 0; g < caller_pos.size(); ++g) {
    sequential[g] =
        caller_pos[g] >= 0 ? caller_value(caller_pos[g]) : (g == 0 ? 0 : sequential[g - 1] + 1);
  }
  const std::vector<std::int64_t> local = {13, 0, 5, 2, 11, 1, 9, 6};  // any subset, any order
  const PadAnchors a = continue_anchors(caller_pos, local);
  for (std::size_t k = 0; k < local.size(); ++k) {
    const std::int64_t g = local[k];
    if (caller_pos[g] >= 0) {
      EXPECT_EQ(a.anchor[k], kNotPadded) << g;
      continue;
    }
    const std::int64_t value = (a.anchor[k] >= 0 ? caller_value(a.anchor[k]) : 0) + a.delta[k];
    EXPECT_EQ(value, sequential[g]) << "slot " << g;
  }
}

TEST(PadAnchors, slots_outside_the_stream_are_refused) {
  EXPECT_THROW(continue_anchors({0, -1}, {2}), Error);
}

}  // namespace
}  // namespace cplab::gpu
