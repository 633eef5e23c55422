#pragma once
// The state the ranks of one World::run share: collective rounds, point-to-point mailboxes, what
// each rank is doing (for error messages), the first failure and the fault plan. One mutex and one
// condition variable: every wait is a wait_until on a deadline, so nothing can hang.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "sim/thread_comm.hpp"

namespace cplab::sim::detail {

// One rank's part of a collective, or one point-to-point message.
struct Contribution {
  std::vector<std::byte> data;
  std::size_t count = 0;
  DType dtype = DType::u8;

  static Contribution copy_of(const void* source, std::size_t count, DType dtype);
};

class ThreadGroup {
 public:
  ThreadGroup(int size, const WorldOptions& options);
  int size() const { return size_; }

  // The fault planned for this call of `call` on `rank` (calls are counted per rank and name), or
  // null. Applying it: corrupt and reorder alter `part`, delay waits; drop is up to the caller.
  const Fault* fault_for(int rank, const std::string& call);
  void apply(int rank, const Fault& fault, Contribution& part);
  std::int64_t faults_fired() const;

  // Deposits `mine` as this rank's part of its next collective, waits for every rank's part, then
  // runs `consume(seq, parts in rank order)` under the group lock (each rank runs its own).
  using Consume = std::function<void(std::int64_t seq, const std::vector<Contribution>& parts)>;
  void join(int rank, const std::string& call, Contribution mine, const Consume& consume);
  // The rank enters its next collective but contributes nothing (a dropped contribution).
  void skip(int rank, const std::string& call);

  void post(int from, int to, int tag, Contribution message);
  Contribution take(int to, int from, int tag);

  void returned(int rank);
  void failed(int rank, std::exception_ptr error, const std::string& message);
  std::exception_ptr first_failure() const;

 private:
  struct RankState {
    std::int64_t entered = 0;  // collectives entered so far
    std::string doing = "running";
    bool returned = false;
  };
  struct Round {
    std::string call;
    std::vector<Contribution> parts;
    std::vector<bool> arrived;
    int arrivals = 0;
    int consumed = 0;
  };
  using MailKey = std::tuple<int, int, int>;  // from, to, tag

  void join_locked(std::unique_lock<std::mutex>& lock, int rank, const std::string& call,
                   Contribution mine, const Consume& consume);
  Contribution take_locked(std::unique_lock<std::mutex>& lock, int to, int from, int tag);
  void record_failure(int rank, std::exception_ptr error, const std::string& message);
  // Throws when another rank has failed: a waiting rank is released at once.
  void throw_if_aborted(int rank, const std::string& what) const;
  void wait_for_round(std::unique_lock<std::mutex>& lock, int rank, std::int64_t seq, Round& round);
  std::string ranks_where(const Round& round, bool arrived) const;

  const int size_;
  const std::chrono::milliseconds timeout_;
  const std::vector<Fault> faults_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<RankState> ranks_;
  std::map<std::int64_t, Round> rounds_;
  std::map<MailKey, std::deque<Contribution>> mail_;
  std::vector<std::map<std::string, int>> calls_;  // per rank: calls of each name so far
  std::int64_t faults_fired_ = 0;
  std::exception_ptr first_failure_;
  int failed_rank_ = -1;
  std::string failure_message_;
};

}  // namespace cplab::sim::detail
