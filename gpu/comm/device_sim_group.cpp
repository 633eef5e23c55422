#include "gpu/comm/device_sim_group.hpp"

#include <fmt/ranges.h>

#include <cstring>

#include "reference/types/error.hpp"

namespace cplab::gpu::detail {

SimGroup::SimGroup(int size_, int device_, std::chrono::milliseconds timeout_)
    : size(size_),
      device(device_),
      timeout(timeout_),
      slots_(static_cast<std::size_t>(size_)),
      waiting_(static_cast<std::size_t>(size_), 0) {
  CPLAB_CHECK(size_ >= 1, "device-sim world of {} ranks; needs at least 1", size_);
}

void SimGroup::throw_if_aborted(const std::string& what) const {
  if (!abort_reason_.empty())
    CPLAB_FAIL("device-sim {}: group broken earlier: {}", what, abort_reason_);
}

void SimGroup::abort(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (abort_reason_.empty()) abort_reason_ = reason;
  cv_.notify_all();
}

bool SimGroup::aborted() {
  std::lock_guard lock(mu_);
  return !abort_reason_.empty();
}

void SimGroup::rendezvous(int rank, const std::string& what) {
  std::unique_lock lock(mu_);
  throw_if_aborted(what);
  const std::uint64_t generation = generation_;
  waiting_[rank] = 1;
  if (++arrived_ == size) {
    arrived_ = 0;
    std::fill(waiting_.begin(), waiting_.end(), 0);
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait_for(lock, timeout, [&] { return generation_ != generation || !abort_reason_.empty(); });
  if (generation_ != generation) return;
  if (abort_reason_.empty()) {
    std::vector<int> in, out;
    for (int r = 0; r < size; ++r) (waiting_[r] ? in : out).push_back(r);
    abort_reason_ = fmt::format("{}: ranks {} arrived, ranks {} missing after {} ms", what, in, out,
                                timeout.count());
    cv_.notify_all();
  }
  CPLAB_FAIL("device-sim {}", abort_reason_);
}

std::vector<Arrival> SimGroup::arrive(int rank, const Arrival& mine, bool same_count) {
  {
    std::lock_guard lock(mu_);
    throw_if_aborted(mine.op);
    slots_[rank] = mine;
  }
  rendezvous(rank, mine.op);
  std::vector<Arrival> all;
  {
    std::lock_guard lock(mu_);
    all = slots_;
  }
  for (int r = 0; r < size; ++r) {
    const Arrival& a = all[r];
    CPLAB_CHECK(std::strcmp(a.op, all[0].op) == 0,
                "device-sim: rank {} called {} while rank 0 called {}", r, a.op, all[0].op);
    CPLAB_CHECK(a.dtype == all[0].dtype, "device-sim {}: rank {} sends {} but rank 0 sends {}",
                a.op, r, dtype_name(a.dtype), dtype_name(all[0].dtype));
    if (same_count) {
      CPLAB_CHECK(
          a.count == all[0].count && a.reduce == all[0].reduce,
          "device-sim {}: rank {} passes count {} but rank 0 passes {} (every rank must agree)",
          a.op, r, a.count, all[0].count);
    }
  }
  return all;
}

std::shared_ptr<Post> SimGroup::post(int from, int to, int tag, const void* buf, std::size_t count,
                                     DType dtype) {
  auto p = std::make_shared<Post>();
  p->buf = buf;
  p->count = count;
  p->dtype = dtype;
  std::lock_guard lock(mu_);
  throw_if_aborted("send");
  mail_[{from, to, tag}].push_back(p);
  cv_.notify_all();
  return p;
}

std::shared_ptr<Post> SimGroup::take(int from, int to, int tag, const std::string& what) {
  std::unique_lock lock(mu_);
  auto& box = mail_[{from, to, tag}];
  const bool ready =
      cv_.wait_for(lock, timeout, [&] { return !box.empty() || !abort_reason_.empty(); });
  throw_if_aborted(what);
  if (!ready) {
    abort_reason_ = fmt::format("{}: rank {} waited {} ms for rank {} to send (tag {})", what, to,
                                timeout.count(), from, tag);
    cv_.notify_all();
    CPLAB_FAIL("device-sim {}", abort_reason_);
  }
  auto p = box.front();
  box.pop_front();
  return p;
}

void SimGroup::finish(const std::shared_ptr<Post>& p, std::string error) {
  std::lock_guard lock(mu_);
  p->done = true;
  p->error = std::move(error);
  cv_.notify_all();
}

void SimGroup::wait_done(const std::shared_ptr<Post>& p, const std::string& what) {
  std::unique_lock lock(mu_);
  const bool done = cv_.wait_for(lock, timeout, [&] { return p->done || !abort_reason_.empty(); });
  if (done && p->done) {
    CPLAB_CHECK(p->error.empty(), "device-sim {}: {}", what, p->error);
    return;
  }
  throw_if_aborted(what);
  abort_reason_ = fmt::format("{}: no matching receive within {} ms", what, timeout.count());
  cv_.notify_all();
  CPLAB_FAIL("device-sim {}", abort_reason_);
}

}  // namespace cplab::gpu::detail
