#pragma once
// The World the comm tests run. cplab_comm_tests runs its ranks as threads; cplab_comm_fiber_tests,
// built from the same files with CPLAB_TEST_RANKS_AS_FIBERS, as fibers (comm/rank_fibers.hpp):
// what World promises holds either way, save what only a thread can do (noted where a test is
// left out of the fiber build).
#include <utility>

#include "comm/thread_comm.hpp"

namespace cplab::sim::testing {

class TestWorld : public World {
 public:
  explicit TestWorld(int size, WorldOptions options = {})
      : World(size, as_built(std::move(options))) {}

 private:
  static WorldOptions as_built(WorldOptions options) {
#ifdef CPLAB_TEST_RANKS_AS_FIBERS
    options.ranks_as_fibers = true;
#endif
    return options;
  }
};

}  // namespace cplab::sim::testing
