#include "comm/rendezvous.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

namespace cplab::sim {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = RankActivity::Kind;

RankActivity computing(std::string note = {}) {
  return {.kind = Kind::computing, .call = std::move(note), .seq = -1, .peer = -1, .tag = 0};
}

}  // namespace

RendezvousCore::RendezvousCore(int size, RendezvousOptions options)
    : size_(size), options_(std::move(options)) {
  CPLAB_CHECK(size >= 1, "{}a group needs at least one rank, got {}", options_.label, size);
  ranks_.resize(static_cast<std::size_t>(size));
  wakes_ = std::make_unique<std::condition_variable[]>(static_cast<std::size_t>(size));
  to_wake_.reserve(static_cast<std::size_t>(size));
}

void RendezvousCore::wake(int rank) {
  RankState& state = ranks_[rank];
  if (state.to_wake) return;
  state.to_wake = true;
  to_wake_.push_back(rank);
}

void RendezvousCore::wake_all() {
  for (int r = 0; r < size_; ++r) wake(r);
  wake_observers_ = true;
}

// What the observers read changed: they are woken too.
void RendezvousCore::activity_changed() {
  if (observers_ > 0) wake_observers_ = true;
}

void RendezvousCore::unlock_and_wake(Lock& lock) {
  // The condition variables live as long as the group, which outlives every rank's calls, so
  // they may be notified after the lock is released. A rank woken before the notification comes
  // finds its wait's condition under the lock; a late notification is a harmless spurious wake.
  thread_local std::vector<int> due;
  due.assign(to_wake_.begin(), to_wake_.end());
  to_wake_.clear();
  for (int r : due) ranks_[r].to_wake = false;
  const bool observers = std::exchange(wake_observers_, false);
  lock.unlock();
  for (int r : due) {
    if (options_.fibers != nullptr) {
      options_.fibers->wake(r);
    } else {
      wakes_[r].notify_one();
    }
  }
  if (observers) observed_.notify_all();
  due.clear();
}

void RendezvousCore::returned(int rank) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  if (ranks_[rank].activity.kind == Kind::failed) return;  // it stays the failed one
  ranks_[rank].activity = {.kind = Kind::finished, .call = {}, .seq = -1, .peer = -1, .tag = 0};
  // A rank waiting for this one may now know it never comes, or be left in a deadlock.
  wake_all();
}

void RendezvousCore::failed(int rank, std::exception_ptr error, const std::string& message) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  record_failure(rank, std::move(error), message);
}

void RendezvousCore::record_failure(int rank, std::exception_ptr error,
                                    const std::string& message) {
  ranks_[rank].activity = {.kind = Kind::failed, .call = {}, .seq = -1, .peer = -1, .tag = 0};
  if (!first_failure_) {
    first_failure_ = std::move(error);
    failed_rank_ = rank;
    failure_message_ = message;
  }
  wake_all();
}

std::exception_ptr RendezvousCore::first_failure() const {
  std::lock_guard lock(mutex_);
  return first_failure_;
}

bool RendezvousCore::aborted() const { return first_failure() != nullptr; }

void RendezvousCore::throw_if_aborted(int rank, const std::string& what) const {
  if (first_failure_ && failed_rank_ != rank) {
    CPLAB_FAIL("{}{}: released because rank {} failed: {}", options_.label, what, failed_rank_,
               failure_message_);
  }
}

void RendezvousCore::pause(int rank, std::chrono::milliseconds how_long, const std::string& doing) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  ranks_[rank].activity = {.kind = Kind::busy, .call = doing, .seq = -1, .peer = -1, .tag = 0};
  activity_changed();
  if (wake_observers_) {
    unlock_and_wake(lock);
    lock.lock();
  }
  const Clock::time_point until = Clock::now() + how_long;
  while (first_failure_ == nullptr && sleep(lock, rank, until)) {
  }
  ranks_[rank].activity = computing();
}

void RendezvousCore::update(const std::function<void()>& change) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  change();
  wake_all();
}

void RendezvousCore::wait_for(int rank, const RankActivity& activity,
                              const std::function<bool()>& ready) {
  guarded(rank, [&](Lock& lock) { wait(lock, rank, activity, ready); });
}

std::vector<RankActivity> RendezvousCore::activities_locked() const {
  std::vector<RankActivity> out;
  for (const RankState& state : ranks_) out.push_back(state.activity);
  return out;
}

std::string RendezvousCore::picture_locked() const { return wait_for_picture(activities_locked()); }

std::vector<RankActivity> RendezvousCore::activities() const {
  std::lock_guard lock(mutex_);
  return activities_locked();
}

std::string RendezvousCore::picture() const { return wait_for_picture(activities()); }

void RendezvousCore::await_state(
    const std::function<bool(const std::vector<RankActivity>&)>& holds) {
  Lock lock(mutex_);
  ++observers_;
  struct Done {
    int& observers;
    ~Done() { --observers; }
  } done{observers_};
  const bool reached = observed_.wait_for(lock, options_.timeout, [&] {
    return first_failure_ != nullptr || holds(activities_locked());
  });
  throw_if_aborted(-1, "awaiting a state of the ranks");
  CPLAB_CHECK(reached, "{}the awaited state did not come within {} ms: {}", options_.label,
              options_.timeout.count(), wait_for_picture(activities_locked()));
}

std::string RendezvousCore::ranks_where(const Round& round, bool arrived) const {
  std::vector<std::string> listed;
  for (int r = 0; r < size_; ++r) {
    if (round.arrived[r] != arrived) continue;
    listed.push_back(arrived ? std::to_string(r)
                             : fmt::format("rank {} ({})", r, doing(ranks_[r].activity)));
  }
  return fmt::format("{}", fmt::join(listed, ", "));
}

std::int64_t RendezvousCore::enter_round(int rank, const std::string& call, bool held) {
  const std::int64_t seq = ranks_[rank].entered++;
  Round& round = rounds_[seq];
  if (round.call.empty()) {
    round.call = call;
    round.arrived.assign(static_cast<std::size_t>(size_), false);
  }
  CPLAB_CHECK(round.call == call,
              "{}collective #{} mismatch: this rank called {}, rank(s) {} called {}",
              options_.label, seq, call, ranks_where(round, true), round.call);
  round.arrived[rank] = true;
  ++round.arrivals;
  round.held += held ? 1 : 0;
  if (round.arrivals == size_) {
    // Every other rank sleeps in wait_round: only they can move now. A held part may belong to a
    // rank that gave up waiting and left (the group failed first): then nobody reads the round.
    round.readable = round.held == 0 || first_failure_ == nullptr;
    for (int r = 0; r < size_; ++r) {
      if (r != rank) wake(r);
    }
  }
  return seq;
}

std::int64_t RendezvousCore::skip_round(int rank, const std::string& call) {
  const std::int64_t seq = ranks_[rank].entered++;
  ranks_[rank].activity = computing(fmt::format("dropped its part of {} #{}", call, seq));
  wake_all();  // the ranks waiting in that round learn that this one went on
  return seq;
}

void RendezvousCore::wait_round(Lock& lock, int rank, std::int64_t seq) {
  const Round& round = rounds_.at(seq);
  const std::function<bool()> ready = [&] { return round.arrivals == size_; };
  wait(lock, rank, {.kind = Kind::collective, .call = round.call, .seq = seq, .peer = -1, .tag = 0},
       ready);
  if (!round.readable) {
    const std::string what = fmt::format("{} #{}", round.call, seq);
    throw_if_aborted(rank, what);
    CPLAB_FAIL("{}{}: released because the group failed", options_.label, what);
  }
}

bool RendezvousCore::finish_round(Lock& lock, int rank, std::int64_t seq, bool held) {
  const auto it = rounds_.find(seq);
  Round& round = it->second;
  if (++round.consumed == size_ && round.held > 0) {
    for (int r = 0; r < size_; ++r) {
      if (r != rank) wake(r);
    }
  }
  if (held) {
    wait_bounded(lock, rank, "letting the other ranks read its part of a collective",
                 [&] { return round.consumed == size_; });
  }
  if (++round.finished < size_) return false;
  rounds_.erase(it);
  return true;
}

void RendezvousCore::wait_bounded(Lock& lock, int rank, const char* doing,
                                  const std::function<bool()>& done) {
  if (done()) return;
  RankState& me = ranks_[rank];
  const RankActivity before = me.activity;
  me.activity = {.kind = Kind::busy, .call = doing, .seq = -1, .peer = -1, .tag = 0};
  activity_changed();
  // The wakes this rank asked for go out before it sleeps.
  unlock_and_wake(lock);
  lock.lock();
  while (!done()) sleep(lock, rank, std::nullopt);
  me.activity = before;
}

bool RendezvousCore::sleep(Lock& lock, int rank, std::optional<Clock::time_point> deadline) {
  if (options_.fibers != nullptr) {
    lock.unlock();
    const bool woken = options_.fibers->park(rank, deadline);
    lock.lock();
    return woken;
  }
  if (!deadline) {
    wakes_[rank].wait(lock);
    return true;
  }
  return wakes_[rank].wait_until(lock, *deadline) == std::cv_status::no_timeout;
}

// The ranks a wait depends on, when they cannot come any more: named at once.
void RendezvousCore::check_peers(int rank, const RankActivity& activity,
                                 const std::string& what) const {
  const std::string& label = options_.label;
  if (activity.kind == Kind::collective) {
    const Round& round = rounds_.at(activity.seq);
    for (int p = 0; p < size_; ++p) {
      if (round.arrived[p]) continue;
      CPLAB_CHECK(ranks_[p].activity.kind != Kind::finished,
                  "{}{}: rank {} returned without joining it; waiting ranks: {}; wait-for: {}",
                  label, what, p, ranks_where(round, true), picture_locked());
      CPLAB_CHECK(ranks_[p].entered <= activity.seq,
                  "{}{}: rank {} skipped it and went on ({}); waiting ranks: {}; wait-for: {}",
                  label, what, p, doing(ranks_[p].activity), ranks_where(round, true),
                  picture_locked());
    }
    return;
  }
  const bool peer_gone = ranks_[activity.peer].activity.kind == Kind::finished;
  CPLAB_CHECK(!(activity.kind == Kind::recv && peer_gone),
              "{}{}: rank {} returned without sending it; wait-for: {}", label, what, activity.peer,
              picture_locked());
  CPLAB_CHECK(!(activity.kind == Kind::send && peer_gone && activity.peer != rank),
              "{}{}: rank {} returned without receiving it; wait-for: {}", label, what,
              activity.peer, picture_locked());
}

// Every rank still in the group waits, and no wait can end: only ranks change the group's state,
// so none ever will. A rank outside the comm, or busy inside it, may still move.
bool RendezvousCore::deadlocked() const {
  for (const RankState& state : ranks_) {
    if (state.activity.left()) continue;
    if (!state.activity.waiting() || state.ready == nullptr) return false;
    if ((*state.ready)()) return false;
  }
  return true;
}

void RendezvousCore::wait(Lock& lock, int rank, const RankActivity& activity,
                          const std::function<bool()>& ready) {
  RankState& me = ranks_[rank];
  me.activity = activity;
  me.ready = &ready;
  activity_changed();  // await_state: what the ranks do has changed
  // Whatever ends the wait (an exception included), the rank is no longer waiting.
  struct Leave {
    RankState& me;
    ~Leave() {
      me.ready = nullptr;
      if (me.activity.waiting()) me.activity = computing();
    }
  } leave{me};
  const auto deadline = Clock::now() + options_.timeout;
  std::string what;  // formatted only when the wait does not end at once
  while (!ready()) {
    if (what.empty()) what = waited_call(activity);
    throw_if_aborted(rank, what);
    check_peers(rank, activity, what);
    if (deadlocked()) {
      // A wait with a known cause (a rank that left or went on without joining) says more than
      // the picture: its own message, as that rank would have raised it, lowest rank first.
      for (int r = 0; r < size_; ++r) {
        const RankActivity& other = ranks_[r].activity;
        if (r == rank || !other.waiting()) continue;
        const ScopedRankTag as_that_rank(r, size_);
        check_peers(r, other, waited_call(other));
      }
      // Else the group's final state, in the same words whichever rank notices it first (a
      // replayed case fails with the same message).
      const ScopedRankTag any_rank(-1, 0);
      CPLAB_FAIL("{}deadlock: every rank still in the group waits and none can move: {}",
                 options_.label, picture_locked());
    }
    if (!to_wake_.empty() || wake_observers_) {
      // The wakes this rank asked for go out before it sleeps; the state may change meanwhile.
      unlock_and_wake(lock);
      lock.lock();
      continue;
    }
    if (!sleep(lock, rank, deadline) && !ready()) {
      throw_if_aborted(rank, what);
      if (activity.kind == Kind::collective) {
        const Round& round = rounds_.at(activity.seq);
        CPLAB_FAIL("{}{} timed out after {} ms: waiting ranks: {}; missing: {}", options_.label,
                   what, options_.timeout.count(), ranks_where(round, true),
                   ranks_where(round, false));
      }
      CPLAB_FAIL("{}{} timed out after {} ms: {}waiting ranks: {}; missing: rank {} ({})",
                 options_.label, what, options_.timeout.count(),
                 activity.kind == Kind::send ? "no matching receive; " : "", rank, activity.peer,
                 doing(ranks_[activity.peer].activity));
    }
  }
}

}  // namespace cplab::sim
