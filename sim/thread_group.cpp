#include "sim/thread_group.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "reference/types/error.hpp"

namespace cplab::sim::detail {
namespace {

using Clock = std::chrono::steady_clock;

// The default corruption: every element moves by one, so no value survives unchanged.
void increment_each(void* data, std::size_t count, DType dtype) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* values = static_cast<T*>(data);
    for (std::size_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        values[i] = !values[i];
      } else {
        values[i] = from_double<T>(to_double(values[i]) + 1.0);
      }
    }
  });
}

}  // namespace

Contribution Contribution::copy_of(const void* source, std::size_t count, DType dtype) {
  Contribution part;
  part.count = count;
  part.dtype = dtype;
  part.data.resize(count * dtype_size(dtype));
  if (!part.data.empty()) std::memcpy(part.data.data(), source, part.data.size());
  return part;
}

ThreadGroup::ThreadGroup(int size, const WorldOptions& options)
    : size_(size),
      timeout_(options.timeout),
      faults_(options.faults),
      ranks_(static_cast<std::size_t>(size)),
      calls_(static_cast<std::size_t>(size)) {}

const Fault* ThreadGroup::fault_for(int rank, const std::string& call) {
  std::lock_guard lock(mutex_);
  const int occurrence = calls_[rank][call]++;
  for (const Fault& fault : faults_) {
    if (fault.rank == rank && fault.call == call &&
        (fault.occurrence < 0 || fault.occurrence == occurrence)) {
      ++faults_fired_;
      return &fault;
    }
  }
  return nullptr;
}

void ThreadGroup::apply(int rank, const Fault& fault, Contribution& part) {
  switch (fault.kind) {
    case Fault::Kind::corrupt:
      (fault.corrupt ? fault.corrupt : increment_each)(part.data.data(), part.count, part.dtype);
      break;
    case Fault::Kind::reorder: {
      const std::size_t elem = dtype_size(part.dtype);
      for (std::size_t i = 0, j = part.count; i + 1 < j; ++i, --j) {
        std::swap_ranges(part.data.begin() + static_cast<std::ptrdiff_t>(i * elem),
                         part.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * elem),
                         part.data.begin() + static_cast<std::ptrdiff_t>((j - 1) * elem));
      }
      break;
    }
    case Fault::Kind::delay: {
      // A late contribution, not a race fix: the wait ends early if the group fails meanwhile.
      std::unique_lock lock(mutex_);
      ranks_[rank].doing =
          fmt::format("delayed {} ms by a fault before {}", fault.delay.count(), fault.call);
      changed_.wait_for(lock, fault.delay, [&] { return first_failure_ != nullptr; });
      ranks_[rank].doing = "running";
      break;
    }
    case Fault::Kind::drop:
      break;
  }
}

std::int64_t ThreadGroup::faults_fired() const {
  std::lock_guard lock(mutex_);
  return faults_fired_;
}

void ThreadGroup::throw_if_aborted(int rank, const std::string& what) const {
  if (first_failure_ && failed_rank_ != rank) {
    CPLAB_FAIL("{}: released because rank {} failed: {}", what, failed_rank_, failure_message_);
  }
}

std::string ThreadGroup::ranks_where(const Round& round, bool arrived) const {
  std::vector<std::string> listed;
  for (int r = 0; r < size_; ++r) {
    if (round.arrived[r] != arrived) continue;
    listed.push_back(arrived ? std::to_string(r) : fmt::format("rank {} ({})", r, ranks_[r].doing));
  }
  return fmt::format("{}", fmt::join(listed, ", "));
}

void ThreadGroup::wait_for_round(std::unique_lock<std::mutex>& lock, int rank, std::int64_t seq,
                                 Round& round) {
  const std::string what = fmt::format("{} #{}", round.call, seq);
  const auto deadline = Clock::now() + timeout_;
  while (round.arrivals < size_) {
    throw_if_aborted(rank, what);
    for (int p = 0; p < size_; ++p) {
      if (round.arrived[p]) continue;
      CPLAB_CHECK(!ranks_[p].returned, "{}: rank {} returned without joining it; waiting ranks: {}",
                  what, p, ranks_where(round, true));
      CPLAB_CHECK(ranks_[p].entered <= seq,
                  "{}: rank {} skipped it and went on ({}); waiting ranks: {}", what, p,
                  ranks_[p].doing, ranks_where(round, true));
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && round.arrivals < size_) {
      CPLAB_FAIL("{} timed out after {} ms: waiting ranks: {}; missing: {}", what, timeout_.count(),
                 ranks_where(round, true), ranks_where(round, false));
    }
  }
}

void ThreadGroup::join(int rank, const std::string& call, Contribution mine,
                       const Consume& consume) {
  std::unique_lock lock(mutex_);
  try {
    join_locked(lock, rank, call, std::move(mine), consume);
  } catch (const Error& e) {
    // Recorded before the lock is released, so no waiter can see this rank's half-done state
    // (entered but absent) and blame it for the wrong reason.
    record_failure(rank, std::current_exception(), e.what());
    throw;
  }
}

void ThreadGroup::join_locked(std::unique_lock<std::mutex>& lock, int rank, const std::string& call,
                              Contribution mine, const Consume& consume) {
  const std::int64_t seq = ranks_[rank].entered++;
  Round& round = rounds_[seq];  // std::map: the reference stays valid while others insert
  if (round.call.empty()) {
    round.call = call;
    round.parts.resize(static_cast<std::size_t>(size_));
    round.arrived.assign(static_cast<std::size_t>(size_), false);
  }
  CPLAB_CHECK(round.call == call,
              "collective #{} mismatch: this rank called {}, rank(s) {} called {}", seq, call,
              ranks_where(round, true), round.call);
  round.parts[rank] = std::move(mine);
  round.arrived[rank] = true;
  ++round.arrivals;
  ranks_[rank].doing = fmt::format("in {} #{}", call, seq);
  changed_.notify_all();
  wait_for_round(lock, rank, seq, round);
  ranks_[rank].doing = "running";
  const int consumed = ++round.consumed;
  consume(seq, round.parts);
  if (consumed == size_) rounds_.erase(seq);
}

void ThreadGroup::skip(int rank, const std::string& call) {
  std::lock_guard lock(mutex_);
  const std::int64_t seq = ranks_[rank].entered++;
  ranks_[rank].doing = fmt::format("dropped its part of {} #{}", call, seq);
  changed_.notify_all();
}

void ThreadGroup::post(int from, int to, int tag, Contribution message) {
  std::lock_guard lock(mutex_);
  mail_[{from, to, tag}].push_back(std::move(message));
  changed_.notify_all();
}

Contribution ThreadGroup::take(int to, int from, int tag) {
  std::unique_lock lock(mutex_);
  try {
    return take_locked(lock, to, from, tag);
  } catch (const Error& e) {
    record_failure(to, std::current_exception(), e.what());
    throw;
  }
}

Contribution ThreadGroup::take_locked(std::unique_lock<std::mutex>& lock, int to, int from,
                                      int tag) {
  const std::string what = fmt::format("recv from rank {} (tag {})", from, tag);
  ranks_[to].doing = fmt::format("in {}", what);
  auto& box = mail_[{from, to, tag}];  // std::map: stays valid while others post
  const auto deadline = Clock::now() + timeout_;
  while (box.empty()) {
    throw_if_aborted(to, what);
    CPLAB_CHECK(!ranks_[from].returned, "{}: rank {} returned without sending it", what, from);
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && box.empty()) {
      CPLAB_FAIL("{} timed out after {} ms: waiting ranks: {}; missing: rank {} ({})", what,
                 timeout_.count(), to, from, ranks_[from].doing);
    }
  }
  Contribution message = std::move(box.front());
  box.pop_front();
  ranks_[to].doing = "running";
  return message;
}

void ThreadGroup::returned(int rank) {
  std::lock_guard lock(mutex_);
  ranks_[rank].returned = true;
  ranks_[rank].doing = "returned";
  changed_.notify_all();
}

void ThreadGroup::failed(int rank, std::exception_ptr error, const std::string& message) {
  std::lock_guard lock(mutex_);
  record_failure(rank, std::move(error), message);
}

void ThreadGroup::record_failure(int rank, std::exception_ptr error, const std::string& message) {
  ranks_[rank].doing = "failed";
  if (!first_failure_) {
    first_failure_ = std::move(error);
    failed_rank_ = rank;
    failure_message_ = message;
  }
  changed_.notify_all();
}

std::exception_ptr ThreadGroup::first_failure() const {
  std::lock_guard lock(mutex_);
  return first_failure_;
}

}  // namespace cplab::sim::detail
