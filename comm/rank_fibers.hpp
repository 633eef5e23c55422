#pragma once
// A World's ranks as fibers taking turns on the calling thread (WorldOptions::ranks_as_fibers).
//
// A sweep's case is microseconds of work per rank, but its ranks meet in the comm dozens of times
// (a ring of C steps, forward and backward): as threads on 2 cores every meeting is a kernel
// context switch: ten cases at C = 64 made 171,378 of them and took 2.0 s on threads, 0.5 s as
// fibers. A fiber switch is a user-space jump. Ranks still wait and wake through the rendezvous
// exactly as threads do (its deadlines, deadlock watch and failures unchanged); only who runs next
// changes: the woken fibers, in the order they were woken, each until it waits again or returns.
//
// For implementations whose ranks keep no state bound to their thread (the CPU twin): a rank that
// needs a thread of its own (a CUDA device, a blocking NCCL call) runs as a thread. The rank tag of
// error messages and the C++ runtime's exception-handling state follow each fiber. Under
// ThreadSanitizer, which would need every switch announced, fibers_supported() is false and World
// runs threads.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace cplab::sim {

// Whether this build can run ranks as fibers.
bool fibers_supported();

namespace detail {

class RankFibers {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RankFibers(int n);
  ~RankFibers();
  RankFibers(const RankFibers&) = delete;
  RankFibers& operator=(const RankFibers&) = delete;

  // Runs body(r) for every r in [0, n) as a fiber on this thread and returns once every one has
  // returned. body must not throw.
  void run(const std::function<void(int)>& body);

  // From rank `rank`'s own fiber: gives the thread to the other fibers until wake(rank) (true)
  // or `deadline` passes (false). A wake that came while the fiber ran ends its next park at once.
  bool park(int rank, std::optional<Clock::time_point> deadline);
  // Lets rank `rank` run again when it is parked (from any fiber of this run).
  void wake(int rank);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace detail
}  // namespace cplab::sim
