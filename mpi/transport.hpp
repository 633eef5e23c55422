#pragma once
// Messages between the processes of the world, the one layer that calls MPI for MpiComm and the
// rank exchange. Every message is one buffer: a header naming what it belongs to (the run's epoch,
// the call's sequence number and kind, its element count and dtype) and the payload. Sends are
// buffered (they return at once, MPI completes them in the background); receives poll against a
// deadline, drop what an earlier run left unread, and stop at once when a peer reports that it
// failed. Nothing here waits without a deadline.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "comm/wait_for.hpp"
#include "core/error.hpp"

namespace cplab::mpi::detail {

// A wait that ended because another rank failed or did not arrive in time: a consequence of
// another rank's trouble, not this rank's own failure.
class Stopped : public Error {
 public:
  using Error::Error;
};

enum class Kind : std::uint8_t {
  all_gather = 1,
  all_gather_v,
  all_reduce,
  reduce_scatter,
  all_to_all,
  barrier,
  message,  // send / recv
  abort,    // a rank failed: the payload is its message
  result,   // a rank's result of a run (the rank exchange)
  lost,     // a rank gave up on the world (a peer silent past a deadline): the payload is why
  // The deadlock watch (wait_monitor.hpp), on its own tag:
  wait_report,    // what a process waits for, and its message counts
  wait_ask,       // has any process moved since its report?
  wait_answer,    // one process's answer
  wait_deadlock,  // every process confirmed: the wait-for picture
};
const char* kind_name(Kind kind);

struct Header {
  std::uint32_t magic = 0x63706c62;  // "cplb"
  std::uint32_t epoch = 0;
  std::uint64_t seq = 0;
  Kind kind = Kind::barrier;
  std::uint8_t dtype = 0;
  std::uint16_t unused = 0;
  std::int32_t tag = 0;
  std::uint64_t count = 0;
};

struct Message {
  int source = -1;
  Header header;
  std::vector<std::byte> payload;
};

inline constexpr int kCollectiveTag = 1;
inline constexpr int kAbortTag = 2;
inline constexpr int kResultTag = 3;
// (4 is the deadlock watch's, wait_monitor.hpp.) A notice that the world is lost, whatever the
// run: a rank that times out tells the others why before it leaves, so that a survivor whose wait
// was left one message short (a peer killed between its sends) still names the rank that is gone.
inline constexpr int kLostTag = 5;
inline constexpr int kUserTagBase = 16;

// What a wait is for, for its error messages: "all_gather #3", the rank waiting, the group size;
// and for the deadlock watch: the activity the wait-for picture shows, and whether a detected
// deadlock ends the wait (a wait inside a run) or it goes on (a wait for the run's results).
struct Waiting {
  std::string call;
  int rank = 0;
  int size = 1;
  sim::RankActivity activity = {};
  bool stoppable = false;
};

// cplab's own copy of the world's communicator: started as MPI starts (every process joins it
// then), finished by the first wait that needs it. await_channel finishes it within timeout_ms,
// or marks the world lost and throws Stopped naming the processes that never came as far as
// their first wait, or that came and then fell silent (`where` begins the message). Every wait and
// send calls it (the rank runner with the run's timeout first).
void start_channel();
void await_channel(std::int64_t timeout_ms, const std::string& where);

// Buffered send of header + payload to world rank `dest`.
void post(int dest, int tag, const Header& header, const void* payload, std::size_t bytes);
// Tells every other rank of [0, size) that this rank failed in `epoch`.
void post_abort(int size, int self, std::uint32_t epoch, const std::string& message);

// The next message of `epoch` from each of `sources` on `tag`, by source. Throws cplab::Error
// naming the ranks that did not arrive when `timeout_ms` passes (and marks the world lost), or at
// once when `watch_abort` and a rank reports that it failed in this epoch.
std::map<int, Message> collect(const std::vector<int>& sources, int tag, std::uint32_t epoch,
                               std::int64_t timeout_ms, bool watch_abort, const Waiting& what);

// Fault injection for the process tests (tests/mpi/process_tests.sh): SIGKILL to this process
// when the environment variable `variable` names world rank `rank`.
void die_if_named(const char* variable, int rank);

// Before MPI_Finalize: waits up to timeout_ms for the sends in flight to complete (the standard
// requires it; a receiver may still be reading one), then lets MPI forget the rest.
void drain_sends(std::int64_t timeout_ms);
// Before MPI_Finalize: waits up to timeout_ms for cplab's communicator, started as MPI started
// (MPI_Comm_idup), to be set up where no wait has needed it yet (a process that stopped before
// its first message, such as a refusal of its arguments). false: it is still not set up, and
// MPI_Finalize, which would tear down a communicator under construction, must be skipped.
bool settle_channel(std::int64_t timeout_ms);

// Takes the next message from `source` (or MPI_ANY_SOURCE) on `tag` if one has arrived; data
// messages are counted for the deadlock watch.
bool try_receive_from(int source, int tag, Message& out);

// The largest user tag send/recv may use.
int max_user_tag();

}  // namespace cplab::mpi::detail
