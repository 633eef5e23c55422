// cplab's own MPI communicator, set up against a deadline (transport.hpp's start_channel,
// await_channel and settle_channel), and the polling the transport's waits share (channel.hpp).
#include "mpi/channel.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <ctime>

#include "core/error.hpp"
#include "mpi/session.hpp"
#include "mpi/transport.hpp"

namespace cplab::mpi::detail {
namespace {

// Fault injection for the tests of a rank that dies before its first message:
// CPLAB_MPI_FAULT_AT_START=RANK makes world rank RANK send itself SIGKILL as it comes to its first
// wait, before it has said so to the others or finished joining cplab's communicator.
void maybe_die_at_start(int rank) { die_if_named("CPLAB_MPI_FAULT_AT_START", rank); }
// CPLAB_MPI_FAULT_IN_SETUP=RANK: the same right after it has said so, before the setup is done.
void maybe_die_in_setup(int rank) { die_if_named("CPLAB_MPI_FAULT_IN_SETUP", rank); }

// Our own copy of the world's group is made by a collective of every process. MPI_Comm_dup would
// wait forever for a process killed before it joined, so the copy is started as MPI starts
// (MPI_Comm_idup) and finished by the first wait that needs it, against that wait's deadline.
// Meanwhile every process says on MPI_COMM_WORLD that it has come this far, says so again every
// kBeatMs while it waits, and says when its part of the setup is done, so that the ones still
// waiting at the deadline can name the processes that never came, and the ones that came and
// then fell silent (killed while the setup, which needs all of them, was under way).
struct Channel {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request setup = MPI_REQUEST_NULL;
  bool started = false, ready = false, announced = false;
  std::vector<std::int64_t> last_heard;  // when process r last spoke (ms; 0: never)
  std::vector<char> set_up;              // process r has finished its part of the setup
};
// The words (one byte, from buffers that live as long as the process).
const char kStillHere = 1;
const char kSetUp = 2;
constexpr std::int64_t kBeatMs = 100;
Channel& channel_state() {
  static auto* state = new Channel();  // never destroyed: MPI may use it while the process exits
  return *state;
}
constexpr int kArrivedTag = 32000;  // on MPI_COMM_WORLD, below the MPI_TAG_UB every MPI allows
// A wait outside a run (the first message of a process) waits this long for the setup.
constexpr std::int64_t kChannelSetupMs = 60000;

void tell_everyone(const World& w, const char* word) {
  for (int q = 0; q < w.size; ++q) {
    if (q == w.rank) continue;
    // A send that fails (to a process already gone) is not this process's error: the silence
    // of that process names it at the deadline.
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(word, 1, MPI_CHAR, q, kArrivedTag, MPI_COMM_WORLD, &request) == MPI_SUCCESS)
      MPI_Request_free(&request);
  }
}

// The first wait of this process says that it has come this far (once).
void announce_arrival(Channel& c, const World& w) {
  if (c.announced) return;
  maybe_die_at_start(w.rank);
  c.announced = true;
  c.last_heard.assign(static_cast<std::size_t>(w.size), 0);
  c.set_up.assign(static_cast<std::size_t>(w.size), 0);
  tell_everyone(w, &kStillHere);
  maybe_die_in_setup(w.rank);
}

// Every word the other processes have sent so far: who spoke at `now`, who is set up.
void hear_the_others(Channel& c, std::int64_t now) {
  for (int flag = 1; flag;) {
    MPI_Status status;
    CPLAB_CHECK(
        MPI_Iprobe(MPI_ANY_SOURCE, kArrivedTag, MPI_COMM_WORLD, &flag, &status) == MPI_SUCCESS,
        "MPI_Iprobe failed");
    if (!flag) break;
    char word = 0;
    MPI_Recv(&word, 1, MPI_CHAR, status.MPI_SOURCE, kArrivedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const auto q = static_cast<std::size_t>(status.MPI_SOURCE);
    c.last_heard[q] = now;
    if (word == kSetUp) c.set_up[q] = 1;
  }
}

// Why the setup did not finish by the deadline: the processes that never came, else those that
// came and fell silent, else MPI's own slowness.
std::string setup_failure(const Channel& c, const World& w, const std::string& where,
                          std::int64_t timeout_ms, std::int64_t now) {
  // Silent: came, then said nothing for several beats, its part of the setup not done.
  const std::int64_t silent_ms = std::max<std::int64_t>(10 * kBeatMs, timeout_ms / 4);
  std::vector<int> missing, arrived, silent;
  for (int q = 0; q < w.size; ++q) {
    const auto i = static_cast<std::size_t>(q);
    (c.last_heard[i] != 0 ? arrived : missing).push_back(q);
    if (c.last_heard[i] != 0 && !c.set_up[i] && now - c.last_heard[i] > silent_ms)
      silent.push_back(q);
  }
  if (!missing.empty())
    return fmt::format(
        "{}: starting cplab's own MPI communicator: no word from rank{} {} within {} ms "
        "(arrived: {}); a process of the job is gone or stuck",
        where, missing.size() == 1 ? "" : "s", ranks_text(missing), timeout_ms,
        ranks_text(arrived));
  if (!silent.empty())
    return fmt::format(
        "{}: starting cplab's own MPI communicator: no word from rank{} {} for more than {} "
        "ms, after it arrived, and the setup (which needs every process) not done within {} "
        "ms; a process of the job is gone or stuck",
        where, silent.size() == 1 ? "" : "s", ranks_text(silent), silent_ms, timeout_ms);
  return fmt::format(
      "{}: starting cplab's own MPI communicator: every process came and is still "
      "answering, but MPI did not finish the setup within {} ms",
      where, timeout_ms);
}

}  // namespace

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

void pause(int round) {
  if (round < 16) {
    sched_yield();
    return;
  }
  const long micros = round < 64 ? 20 : 200;
  timespec ts{0, micros * 1000};
  nanosleep(&ts, nullptr);
}

std::string ranks_text(const std::vector<int>& ranks) {
  return ranks.empty() ? std::string("none") : fmt::format("{}", fmt::join(ranks, ", "));
}

MPI_Comm channel() {
  Channel& c = channel_state();
  if (!c.ready) {
    const World w = world();
    await_channel(kChannelSetupMs, fmt::format("rank {}/{}", w.rank, w.size));
  }
  return c.comm;
}

void start_channel() {
  Channel& c = channel_state();
  if (c.started) return;
  c.started = true;
  CPLAB_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &c.comm, &c.setup) == MPI_SUCCESS,
              "MPI_Comm_idup failed");
}

void await_channel(std::int64_t timeout_ms, const std::string& where) {
  Channel& c = channel_state();
  if (c.ready) return;
  const World w = world();
  start_channel();
  CPLAB_CHECK(!lost(), "{}: the MPI world is lost: {}", where, lost_reason());
  std::int64_t last_beat = now_ms();
  announce_arrival(c, w);
  const std::int64_t deadline = now_ms() + timeout_ms;
  for (int round = 0;; ++round) {
    int done = 0;
    CPLAB_CHECK(MPI_Test(&c.setup, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                "{}: MPI_Comm_idup failed", where);
    const std::int64_t now = now_ms();
    c.last_heard[static_cast<std::size_t>(w.rank)] = now;
    if (!done && now - last_beat >= kBeatMs) {
      tell_everyone(w, &kStillHere);
      last_beat = now;
    }
    hear_the_others(c, now);
    if (done) {
      tell_everyone(w, &kSetUp);
      MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
      c.ready = true;
      return;
    }
    if (now >= deadline) {
      const std::string message = setup_failure(c, w, where, timeout_ms, now);
      mark_lost(message);
      throw Stopped(message);
    }
    pause(round);
  }
}

bool settle_channel(std::int64_t timeout_ms) {
  Channel& c = channel_state();
  if (!c.started || c.ready || c.setup == MPI_REQUEST_NULL) return true;
  const std::int64_t deadline = now_ms() + timeout_ms;
  for (int round = 0;; ++round) {
    int done = 0;
    if (MPI_Test(&c.setup, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    if (now_ms() >= deadline) return false;
    pause(round);
  }
}

}  // namespace cplab::mpi::detail
