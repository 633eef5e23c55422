#pragma once
// C virtual ranks in one process, one thread each, talking through host memory.
//
//   World world(4, {.timeout = std::chrono::milliseconds(500)});
//   world.run([&](RankContext& ctx) { ... ctx.comm.all_gather(...) ... });
//
// run() rethrows the first failure of any rank (its message carries "rank r/C:"). A collective
// that a rank never joins (it returned, threw, skipped it or called another one) or joins with a
// disagreeing size ends in a cplab::Error naming the collective, the waiting ranks and the missing
// one: at once when the cause is known, else when the timeout expires. Never a hang. When every
// rank still running waits in the comm and none can move (a skipped send), that is a deadlock,
// reported at once with the wait-for picture (comm/rendezvous.hpp); the timeout is for a rank that
// computes and never comes.
//
// Fault injection alters one rank's contribution to a chosen call, so tests can prove that the
// checks built on top notice a corrupted, dropped, reordered or late message.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace cplab::sim {

namespace detail {
class ThreadGroup;
}

struct Fault {
  enum class Kind : std::uint8_t {
    corrupt,  // the contribution is altered: `corrupt` if set, else every element incremented by 1
    drop,     // the rank does not contribute: a collective returns at once on that rank leaving its
              // output untouched (the others find it missing); a sent message is never delivered
    reorder,  // the contribution's elements arrive in reverse order
    delay,    // the contribution arrives `delay` later
  };
  Kind kind = Kind::corrupt;
  int rank = 0;               // whose contribution
  std::string call = "send";  // all_gather, all_gather_v, all_reduce, reduce_scatter, all_to_all,
                              // send (send and send_recv), barrier
  int occurrence = -1;        // which call of that name on that rank, 0-based; -1: every one
  std::chrono::milliseconds delay{0};
  std::function<void(void* data, std::size_t count, DType dtype)> corrupt;
};

struct WorldOptions {
  std::chrono::milliseconds timeout{60000};  // how long a rank waits for the others
  std::vector<Fault> faults;
  // The ranks take turns as fibers on the calling thread (comm/rank_fibers.hpp) instead of one
  // thread each: for ranks that keep no state bound to their thread. Ignored where the build
  // cannot run fibers (fibers_supported()).
  bool ranks_as_fibers = false;
};

struct RankContext {
  int rank;
  int size;
  Comm& comm;
};

class World {
 public:
  explicit World(int size, WorldOptions options = {});
  int size() const { return size_; }

  // Runs fn on every rank, each in its own thread (or fiber) with its rank tag set; waits for
  // them; rethrows the first failure. Each run starts from a fresh group (no message or collective
  // carries over). The threads are kept for later runs (comm/rank_threads.hpp): thread-local state
  // that must end with the rank goes to sim::at_rank_end.
  void run(const std::function<void(RankContext&)>& fn);

  // Of the last run: bytes each rank sent (wire_bytes.hpp), and how many times faults fired.
  const std::vector<std::uint64_t>& bytes_sent() const { return bytes_sent_; }
  std::int64_t faults_fired() const { return faults_fired_; }

 private:
  int size_;
  WorldOptions options_;
  std::vector<std::uint64_t> bytes_sent_;
  std::int64_t faults_fired_ = 0;
};

// One rank's endpoint of a World's group. Made by World::run; public so tests can name its type.
class ThreadComm final : public Comm {
 public:
  ThreadComm(int rank, detail::ThreadGroup& group);
  int rank() const override { return rank_; }
  int size() const override;
  std::string name() const override { return "thread"; }

  std::uint64_t bytes_sent() const override { return bytes_sent_; }

 private:
  void do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) override;
  std::vector<std::size_t> do_all_gather_v(const void* send, std::size_t count, void* recv,
                                           std::size_t recv_capacity, DType dtype) override;
  void do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                         ReduceOp op) override;
  void do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) override;
  void do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                    std::size_t recv_count, int from, DType dtype, int tag) override;
  void do_barrier() override;
  void check_peer(int peer, const char* what) const;

  int rank_;
  detail::ThreadGroup& group_;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace cplab::sim
