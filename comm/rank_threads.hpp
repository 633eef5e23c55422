#pragma once
// The threads World::run runs its ranks on, kept from one run to the next: a sweep runs a few
// small Worlds per case, and starting and ending C threads each time cost more than the ranks
// computed. A thread serves one rank of one run at a time. Thread-local state that a rank's
// thread used to take with it when it ended (a device comm, a stream) is handed to at_rank_end,
// so that it still ends with the rank.
#include <functional>
#include <system_error>

namespace cplab::sim {

// Runs `done` on this thread when the rank it serves ends (after World::run's rank body, before
// the run returns). On a thread that serves no rank of World::run it does nothing: that thread's
// thread-local state ends with the thread. Hooks run in the reverse order of their registration,
// as thread-local destructors do.
void at_rank_end(std::function<void()> done);

namespace detail {

// Runs body(r) for every r in [0, n), each on a thread of its own, all at the same time, and
// returns once every one has returned. body must not throw. When the system refuses a thread for
// rank r, refused(r, error) runs on the calling thread and no rank from r on is started (the ones
// started run to their end).
void run_on_rank_threads(int n, const std::function<void(int)>& body,
                         const std::function<void(int, const std::system_error&)>& refused);

}  // namespace detail
}  // namespace cplab::sim
