#pragma once
// Running the sim on a World of C ranks, each rank with its own shards of a batch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "comm/thread_comm.hpp"
#include "sim/sim_implementation.hpp"
#include "support.hpp"

namespace cplab::simtest {

using RankFn = std::function<void(sim::RankContext&, std::vector<RankShard>&)>;

// Shards `batch` on every rank with `impl` (default: the standard sim) and runs `fn` there.
inline void on_every_rank(const LayoutSpec& spec, const Batch& batch, const RankFn& fn,
                          Implementation* impl = nullptr, sim::WorldOptions options = {},
                          std::int64_t* faults_fired = nullptr) {
  sim::SimImplementation standard;
  Implementation& chosen = impl != nullptr ? *impl : standard;
  sim::World world(static_cast<int>(spec.cp), std::move(options));
  struct Report {  // faults fired, reported whether the run passes or throws
    sim::World& world;
    std::int64_t* fired;
    ~Report() {
      if (fired != nullptr) *fired = world.faults_fired();
    }
  } report{world, faults_fired};
  world.run([&](sim::RankContext& ctx) {
    std::vector<RankShard> shards = chosen.shard(ctx.comm, spec, batch);
    fn(ctx, shards);
  });
}

// Largest |a - b| / (atol + rtol·|b|) over all elements (<= 1 means close).
inline double closeness(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return 1e30;
  double worst = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::abs(a.get(i) - b.get(i)) / (atol + rtol * std::abs(b.get(i))));
  }
  return worst;
}

}  // namespace cplab::simtest
