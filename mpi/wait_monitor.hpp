#pragma once
// Deadlock detection across the processes of an MPI job. Every process counts the messages it
// sends and receives on each (peer, tag) channel; a process that has waited a little while with
// nothing changing tells every other process what it waits for and what it has sent and received
// (a report, on its own tag). A waiting process that holds a report from every other process in
// which each of them waits too, and finds that no channel anybody waits on has a message on its
// way (sent count = received count), asks every process to confirm that it has not moved since
// its report. When all confirm, there was one moment when every process waited for a message that
// nobody had sent: nothing can ever arrive. Then every process whose wait belongs to a run stops
// at once with the wait-for picture (comm/wait_for.hpp); processes waiting for the run's results
// keep waiting and receive the stopped ranks' results. A process that is busy, gone or killed
// never confirms: the wait's timeout stays for those.
//
// Only the thread that talks MPI calls this (MPI_THREAD_FUNNELED); waits poll, never block.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/wait_for.hpp"

namespace cplab::mpi::detail {

inline constexpr int kMonitorTag = 4;

// Data traffic, counted per channel (the transport calls these for every data message).
void count_sent(int dest, int tag);
void count_received(int source, int tag);

// While alive, this process waits for one message on `tag` from each of `sources` (world ranks).
class WaitScope {
 public:
  // stoppable: a wait inside a run, which a detected deadlock ends (throws Stopped from poll).
  WaitScope(const sim::RankActivity& activity, const std::vector<int>& sources, int tag,
            bool stoppable, std::string where);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

  void arrived(int source);  // its message came: no longer waited for
  // Reads the other processes' word, answers it, reports and checks; throws Stopped naming the
  // deadlock with the wait-for picture when one is confirmed and this wait is stoppable.
  void poll();
};

// Of `ranks` (world ranks a wait heard nothing from), those that wait themselves by their latest
// report, one that no later message of theirs contradicts (this process has not received more
// from them than the report says they sent): whom each waits for, and in what. A timeout uses it
// to name the ranks that are gone rather than the ones that wait for them in turn.
struct WaitingInTurn {
  int rank = -1;
  std::vector<int> sources;
  std::string call;  // "in all_gather #3", or the wait's own words ("for the results of run 4")
};
std::vector<WaitingInTurn> waiting_in_turn(const std::vector<int>& ranks);

// How long a wait stays unchanged before this process reports it (milliseconds).
inline constexpr std::int64_t kQuietMs = 10;

}  // namespace cplab::mpi::detail
