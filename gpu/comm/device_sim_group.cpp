#include "gpu/comm/device_sim_group.hpp"

#include <cstring>

#include "core/error.hpp"

namespace cplab::gpu::detail {

SimGroup::SimGroup(int size_, int device_, std::chrono::milliseconds timeout_)
    : size(size_),
      device(device_),
      timeout(timeout_),
      engine_(size_, {.timeout = timeout_, .label = "device-sim "}) {}

void SimGroup::returned(int rank) { engine_.returned(rank); }

void SimGroup::failed(int rank, std::exception_ptr error, const std::string& message) {
  engine_.failed(rank, std::move(error), message);
}

bool SimGroup::aborted() const { return engine_.aborted(); }

std::exception_ptr SimGroup::first_failure() const { return engine_.first_failure(); }

void SimGroup::rendezvous(int rank, const std::string& what) {
  engine_.join(rank, what,
               Arrival{.op = "",
                       .send = nullptr,
                       .recv = nullptr,
                       .count = 0,
                       .capacity = 0,
                       .dtype = DType::u8,
                       .reduce = ReduceOp::sum},
               [](std::int64_t, const std::vector<Arrival>&) {});
}

std::vector<Arrival> SimGroup::arrive(int rank, const Arrival& mine, bool same_count) {
  std::vector<Arrival> all;
  // The engine checks that every rank is in the same op; the sizes are checked here, on every
  // rank alike, once every part has arrived.
  engine_.join(rank, mine.op, mine, [&](std::int64_t, const std::vector<Arrival>& parts) {
    for (int r = 0; r < size; ++r) {
      const Arrival& a = parts[r];
      CPLAB_CHECK(std::strcmp(a.op, parts[0].op) == 0,
                  "device-sim: rank {} called {} while rank 0 called {}", r, a.op, parts[0].op);
      CPLAB_CHECK(a.dtype == parts[0].dtype, "device-sim {}: rank {} sends {} but rank 0 sends {}",
                  a.op, r, dtype_name(a.dtype), dtype_name(parts[0].dtype));
      if (same_count) {
        CPLAB_CHECK(
            a.count == parts[0].count && a.reduce == parts[0].reduce,
            "device-sim {}: rank {} passes count {} but rank 0 passes {} (every rank must agree)",
            a.op, r, a.count, parts[0].count);
      }
    }
    all = parts;
  });
  return all;
}

std::shared_ptr<Post> SimGroup::post(int from, int to, int tag, const void* buf, std::size_t count,
                                     DType dtype) {
  auto p = std::make_shared<Post>();
  p->buf = buf;
  p->count = count;
  p->dtype = dtype;
  engine_.post(from, to, tag, p);
  return p;
}

std::shared_ptr<Post> SimGroup::take(int from, int to, int tag) {
  return engine_.take(to, from, tag);
}

void SimGroup::finish(const std::shared_ptr<Post>& p, std::string error) {
  engine_.update([&] {
    p->done = true;
    p->error = std::move(error);
  });
}

void SimGroup::wait_done(int from, int to, int tag, const std::shared_ptr<Post>& p) {
  engine_.wait_for(
      from, {.kind = sim::RankActivity::Kind::send, .call = {}, .seq = -1, .peer = to, .tag = tag},
      [&] { return p->done; });
  // p->error is written once, under the engine's lock, before done: done was seen under it too.
  CPLAB_CHECK(p->error.empty(), "device-sim send to rank {} (tag {}): {}", to, tag, p->error);
}

}  // namespace cplab::gpu::detail
