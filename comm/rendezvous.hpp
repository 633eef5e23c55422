#pragma once
// The rendezvous engine of the comms whose ranks are threads of one process (ThreadComm and the
// device-sim comm): numbered collective rounds, point-to-point mailboxes, what every rank is
// doing, the first failure (it releases every waiting rank at once) and a deadline on every wait.
//
// It also knows when nothing can ever move again: every rank still in the group waits for another
// rank (in a collective, a recv or a send) and none of those waits can end. Only ranks change the
// group's state, so such a wait is a deadlock, reported at once with the wait-for picture
// (wait_for.hpp) instead of at the timeout. A rank outside the comm (computing, delayed) is never
// part of a deadlock: the others wait for it, and the timeout stays for a rank that never comes.
//
// One mutex; one condition variable per rank, so that a change wakes only the ranks whose wait it
// can end (a completed round its members, a message its receiver; a failure, a rank leaving or a
// skipped round every waiting rank, since those end waits through their errors). The wakes are
// sent once the lock is released, so that a woken rank does not block again on the mutex. Every
// wait that depends on another rank has a deadline. Payloads are the comm's own types: Part for a
// rank's part of a collective, Message for a point-to-point message.
//
// A part may point into its rank's own memory instead of holding a copy ("held" in join): the
// others read it in place once every part has arrived, and its rank leaves the collective only
// after every rank has consumed the round, so it cannot reuse the memory under a reader.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "comm/rank_fibers.hpp"
#include "comm/wait_for.hpp"
#include "core/error.hpp"

namespace cplab::sim {

struct RendezvousOptions {
  std::chrono::milliseconds timeout{60000};  // how long one wait may last
  std::string label;                         // starts every message: "" or "device-sim "
  // The ranks are these fibers (comm/rank_fibers.hpp), not threads: a rank waits by parking its
  // fiber and is woken through it. The calls of such a group come from its fibers only.
  detail::RankFibers* fibers = nullptr;
};

// Everything but the payloads.
class RendezvousCore {
 public:
  RendezvousCore(int size, RendezvousOptions options);
  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return options_.timeout; }

  // The rank left the group: normally, or with an error (the first one recorded is kept, and
  // every waiting rank is released with it).
  void returned(int rank);
  void failed(int rank, std::exception_ptr error, const std::string& message);
  std::exception_ptr first_failure() const;
  bool aborted() const;

  // Keeps `rank` busy inside the comm for `how_long` (a late contribution, never a deadlock);
  // ends early when the group fails.
  void pause(int rank, std::chrono::milliseconds how_long, const std::string& doing);
  // Runs `change` under the lock and wakes every waiter: for state that waits' conditions read.
  void update(const std::function<void()>& change);
  // Waits as `rank` doing `activity` (a recv or a send) until `ready()` holds under the lock.
  void wait_for(int rank, const RankActivity& activity, const std::function<bool()>& ready);

  // Every rank's activity now, and the picture of it.
  std::vector<RankActivity> activities() const;
  std::string picture() const;
  // Blocks the calling thread (which counts as computing) until `holds(activities)`, or fails at
  // the deadline: for code that must act once the ranks are in a known state.
  void await_state(const std::function<bool(const std::vector<RankActivity>&)>& holds);

 protected:
  using Lock = std::unique_lock<std::mutex>;

  // Collective rounds: a rank's n-th collective is round n. enter_round checks that the round is
  // the same call on every rank and marks the rank arrived (`held`: its part points into its own
  // memory); wait_round waits for every rank; finish_round counts the rank out (a held rank first
  // waits until every rank has consumed the round) and is true for the last one (the round is
  // then gone).
  std::int64_t enter_round(int rank, const std::string& call, bool held);
  void wait_round(Lock& lock, int rank, std::int64_t seq);
  bool finish_round(Lock& lock, int rank, std::int64_t seq, bool held);
  // The rank enters its next round without contributing (its part was dropped).
  std::int64_t skip_round(int rank, const std::string& call);

  // The wait every call is built on: until ready(), a failure elsewhere, a deadlock, a rank the
  // wait needs leaving the group, or the deadline.
  void wait(Lock& lock, int rank, const RankActivity& activity, const std::function<bool()>& ready);
  // Waits, without a deadline and whatever else happens, until done(): only for what other ranks
  // are sure to finish soon without waiting themselves (reading a part or a message in place).
  // The rank is busy meanwhile (`doing`), never part of a deadlock.
  void wait_bounded(Lock& lock, int rank, const char* doing, const std::function<bool()>& done);
  // Sleeps as `rank`, the lock released meanwhile, until it is woken (true; perhaps spuriously)
  // or `deadline` passes (false).
  bool sleep(Lock& lock, int rank, std::optional<std::chrono::steady_clock::time_point> deadline);
  void record_failure(int rank, std::exception_ptr error, const std::string& message);
  void throw_if_aborted(int rank, const std::string& what) const;

  // Under the lock: wake `rank`, or every rank that waits (and the await_state observers), once
  // the lock is released.
  void wake(int rank);
  void wake_all();
  // Releases the lock, then sends the wakes asked for under it.
  void unlock_and_wake(Lock& lock);

  // Runs body under the lock; an exception it throws is the rank's failure, recorded before the
  // lock is released so that no waiter sees this rank's half-done state and blames it wrongly. The
  // wakes asked for meanwhile are sent after the lock is released, whichever way body ends.
  template <typename Body>
  auto guarded(int rank, Body&& body) {
    Lock lock(mutex_);
    const WakeOnRelease wakes{*this, lock};
    try {
      return body(lock);
    } catch (const std::exception& e) {
      // Out of memory too: a held rank must never leave a round without its failure recorded,
      // or the others would read a part it no longer keeps.
      record_failure(rank, std::current_exception(), e.what());
      throw;
    }
  }

  // Sends the wakes asked for under `lock` once it is released (unless released already).
  struct WakeOnRelease {
    RendezvousCore& core;
    Lock& lock;
    ~WakeOnRelease() {
      if (lock.owns_lock()) core.unlock_and_wake(lock);
    }
  };

  mutable std::mutex mutex_;

 private:
  struct RankState {
    RankActivity activity;
    const std::function<bool()>* ready = nullptr;  // while it waits: whether its wait can end
    std::int64_t entered = 0;                      // rounds entered so far
    bool to_wake = false;                          // a wake is due once the lock is released
  };
  struct Round {
    std::string call;
    std::vector<bool> arrived;
    int arrivals = 0;
    int held = 0;           // parts that point into their rank's memory
    bool readable = false;  // complete, and its parts may be read (set once, on completion)
    int consumed = 0;
    int finished = 0;
  };
  void check_peers(int rank, const RankActivity& activity, const std::string& what) const;
  bool deadlocked() const;
  std::string ranks_where(const Round& round, bool arrived) const;
  std::vector<RankActivity> activities_locked() const;
  std::string picture_locked() const;
  void activity_changed();

  const int size_;
  const RendezvousOptions options_;
  std::vector<RankState> ranks_;
  std::unique_ptr<std::condition_variable[]> wakes_;  // [size]: each rank waits on its own
  std::condition_variable observed_;                  // the await_state observers wait on this
  std::vector<int> to_wake_;                          // ranks with to_wake set
  bool wake_observers_ = false;
  std::map<std::int64_t, Round> rounds_;  // std::map: references stay valid while others insert
  int observers_ = 0;  // threads in await_state: they need to hear of every change
  std::exception_ptr first_failure_;
  int failed_rank_ = -1;
  std::string failure_message_;
};

template <typename Part, typename Message = Part>
class Rendezvous : public RendezvousCore {
 public:
  using RendezvousCore::RendezvousCore;

  // Deposits `mine` as this rank's part of its next collective, waits for every rank's part, then
  // runs `consume(seq, parts in rank order)` (each rank runs its own). consume runs outside the
  // lock, so the ranks copy their outputs at the same time: once every part has arrived nothing
  // writes them, and the round's parts stay until the last rank has consumed them. An Error from
  // consume fails this rank (and so releases the others).
  //
  // `held`: `mine` points into memory of this rank's caller (it copies nothing), which the others
  // read in consume; join then returns only once every rank has consumed the round, even when one
  // of them failed. A round with a held part is not read at all when the group failed before it
  // was complete (a held rank that gave up waiting may have left already).
  using Consume = std::function<void(std::int64_t seq, const std::vector<Part>& parts)>;
  void join(int rank, const std::string& call, Part mine, const Consume& consume,
            bool held = false) {
    const std::vector<Part>* arrived = nullptr;
    const std::int64_t seq = guarded(rank, [&](Lock& lock) {
      const std::int64_t round = enter_round(rank, call, held);
      std::vector<Part>& parts = parts_[round];  // std::map: stays put while others insert
      parts.resize(static_cast<std::size_t>(size()));
      parts[static_cast<std::size_t>(rank)] = std::move(mine);
      wait_round(lock, rank, round);
      arrived = &parts;
      return round;
    });
    // From here on every rank of the round consumes it and counts itself out, whatever happens:
    // a held rank waits for exactly that.
    const auto finish = [&] {
      Lock lock(mutex_);
      const WakeOnRelease wakes{*this, lock};
      if (finish_round(lock, rank, seq, held)) parts_.erase(seq);
    };
    try {
      consume(seq, *arrived);
    } catch (const Error& e) {
      guarded(rank, [&](Lock&) { record_failure(rank, std::current_exception(), e.what()); });
      finish();
      throw;
    } catch (...) {
      finish();
      throw;
    }
    finish();
  }
  // The rank enters its next collective but contributes nothing: the others find it missing.
  void skip(int rank, const std::string& call) {
    guarded(rank, [&](Lock&) { skip_round(rank, call); });
  }

  // Buffered: the message waits in the (from, to, tag) mailbox; messages of one mailbox arrive in
  // the order they were posted.
  void post(int from, int to, int tag, Message message) {
    guarded(from, [&](Lock&) {
      throw_if_aborted(
          from,
          waited_call(
              {.kind = RankActivity::Kind::send, .call = {}, .seq = -1, .peer = to, .tag = tag}));
      mail_[{from, to, tag}].push_back(std::move(message));
      wake(to);
    });
  }
  // `taken` runs on the message under the lock, as it leaves the mailbox.
  Message take(int to, int from, int tag, const std::function<void(Message&)>& taken = {}) {
    return guarded(to, [&](Lock& lock) {
      auto& box = mail_[{from, to, tag}];  // std::map: stays valid while others post
      const std::function<bool()> ready = [&] { return !box.empty(); };
      wait(lock, to,
           {.kind = RankActivity::Kind::recv, .call = {}, .seq = -1, .peer = from, .tag = tag},
           ready);
      Message message = std::move(box.front());
      box.pop_front();
      if (taken) taken(message);
      return message;
    });
  }

 protected:
  // The (from, to, tag) mailbox, under the lock.
  std::deque<Message>& mailbox(int from, int to, int tag) { return mail_[{from, to, tag}]; }

 private:
  std::map<std::int64_t, std::vector<Part>> parts_;
  std::map<std::tuple<int, int, int>, std::deque<Message>> mail_;  // from, to, tag
};

}  // namespace cplab::sim
