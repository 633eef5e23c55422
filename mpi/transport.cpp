#include "mpi/transport.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>

#include "core/error.hpp"
#include "mpi/channel.hpp"
#include "mpi/session.hpp"
#include "mpi/wait_monitor.hpp"

namespace cplab::mpi::detail {
namespace {

// Sends in flight: each keeps its buffer alive until MPI is done with it.
struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<std::byte> buffer;
  int dest = -1;
};
// Never destroyed: MPI may still read a buffer while the process exits (MPI_Finalize runs from
// an exit handler, after function-local statics are gone).
std::list<Pending>& outbox() {
  static auto* pending = new std::list<Pending>();
  return *pending;
}
std::string g_send_error;

void progress_sends() {
  for (auto it = outbox().begin(); it != outbox().end();) {
    int done = 0;
    const int code = MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      if (g_send_error.empty())
        g_send_error = fmt::format("a send to rank {} failed: {}", it->dest, mpi_error_text(code));
      done = 1;
    }
    it = done ? outbox().erase(it) : std::next(it);
  }
}

}  // namespace

void die_if_named(const char* variable, int rank) {
  const char* text = std::getenv(variable);
  if (text != nullptr && std::atoi(text) == rank) ::raise(SIGKILL);
}

namespace {

// Data: what the deadlock watch counts (not its own word, not a failure notice).
bool is_data(int tag) { return tag != kAbortTag && tag != kMonitorTag && tag != kLostTag; }

// Fault injection for the tests of a rank that dies while its message is on the way:
// CPLAB_MPI_FAULT_MID_MESSAGE="RANK BYTES" makes world rank RANK send itself SIGKILL right after
// posting its first message of at least BYTES bytes (the receivers then find its header and read
// the rest from a process that is gone).
void maybe_die_mid_message(std::size_t bytes) {
  static const std::pair<int, long long> fault = [] {
    std::pair<int, long long> f{-1, 0};
    if (const char* text = std::getenv("CPLAB_MPI_FAULT_MID_MESSAGE")) {
      CPLAB_CHECK(std::sscanf(text, "%d %lld", &f.first, &f.second) == 2 && f.second > 0,
                  "CPLAB_MPI_FAULT_MID_MESSAGE='{}' is not 'RANK BYTES'", text);
    }
    return f;
  }();
  if (fault.first == world().rank && static_cast<long long>(bytes) >= fault.second)
    ::raise(SIGKILL);
}

}  // namespace

namespace {

// Marks the world lost, and says why to every other process (kLostTag) first.
void lose_world(const std::string& message) {
  if (lost()) return;
  Header header;
  header.kind = Kind::lost;
  header.count = message.size();
  const World w = world();
  for (int q = 0; q < w.size; ++q) {
    if (q == w.rank) continue;
    try {
      post(q, kLostTag, header, message.data(), message.size());
    } catch (const Error&) {
      // A process this one cannot send to learns nothing; the others still do.
    }
  }
  mark_lost(message);
}

// A matched message whose body MPI is still receiving. A large message's body is read from the
// sender's memory after its header has arrived (Open MPI's shared-memory transport copies it
// straight out of the sending process), so a sender killed in between leaves a receive that
// never completes: it is polled against the wait's deadline, never waited on with MPI_Mrecv.
struct Incoming {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<std::byte> buffer;
  int source = -1;
};

// Receives given up on: MPI may still write into their buffers, so those live as long as the
// process (as the outbox's do).
std::list<Incoming>& abandoned() {
  static auto* given_up = new std::list<Incoming>();
  return *given_up;
}
void abandon(Incoming&& in) {
  if (in.request != MPI_REQUEST_NULL) abandoned().push_back(std::move(in));
}

// Starts receiving the next message from `source` on `tag`, if one has arrived.
bool start_receive(int source, int tag, Incoming& in) {
  int flag = 0;
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status status;
  CPLAB_CHECK(MPI_Improbe(source, tag, channel(), &flag, &handle, &status) == MPI_SUCCESS,
              "MPI_Improbe failed");
  if (!flag) return false;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  in.source = status.MPI_SOURCE;
  in.buffer.resize(static_cast<std::size_t>(bytes));
  CPLAB_CHECK(MPI_Imrecv(in.buffer.data(), bytes, MPI_BYTE, &handle, &in.request) == MPI_SUCCESS,
              "MPI_Imrecv failed");
  return true;
}

// Whether the body has arrived. A transfer that failed (the sender is gone) loses the world.
bool body_arrived(Incoming& in) {
  int done = 0;
  const int code = MPI_Test(&in.request, &done, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    const std::string message =
        fmt::format("a message from rank {} could not be read ({}): the rank is gone", in.source,
                    mpi_error_text(code));
    in.request = MPI_REQUEST_NULL;
    lose_world(message);
    throw Stopped(message);
  }
  return done != 0;
}

Message unpack(const Incoming& in, int tag) {
  Message out;
  CPLAB_CHECK(in.buffer.size() >= sizeof(Header),
              "a message of {} bytes from rank {} has no header", in.buffer.size(), in.source);
  out.source = in.source;
  std::memcpy(&out.header, in.buffer.data(), sizeof(Header));
  CPLAB_CHECK(out.header.magic == Header{}.magic, "a message from rank {} is not cplab's",
              out.source);
  out.payload.assign(in.buffer.begin() + sizeof(Header), in.buffer.end());
  if (is_data(tag)) count_received(out.source, tag);
  return out;
}

// What a control message (a failure notice, the deadlock watch's word; a few hundred bytes) may
// take to arrive whole once its header has.
constexpr std::int64_t kControlMessageMs = 10000;

}  // namespace

bool try_receive_from(int source, int tag, Message& out) {
  Incoming in;
  if (!start_receive(source, tag, in)) return false;
  const std::int64_t deadline = now_ms() + kControlMessageMs;
  for (int round = 0; !body_arrived(in); ++round) {
    if (now_ms() >= deadline) {
      const std::string message = fmt::format(
          "a message from rank {} began to arrive and did not complete within {} ms: the rank "
          "is gone or stuck",
          in.source, kControlMessageMs);
      abandon(std::move(in));
      lose_world(message);
      throw Stopped(message);
    }
    pause(round);
  }
  out = unpack(in, tag);
  return true;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::all_gather:
      return "all_gather";
    case Kind::all_gather_v:
      return "all_gather_v";
    case Kind::all_reduce:
      return "all_reduce";
    case Kind::reduce_scatter:
      return "reduce_scatter";
    case Kind::all_to_all:
      return "all_to_all";
    case Kind::barrier:
      return "barrier";
    case Kind::message:
      return "send";
    case Kind::abort:
      return "abort";
    case Kind::result:
      return "result";
    case Kind::lost:
      return "lost";
    case Kind::wait_report:
      return "wait_report";
    case Kind::wait_ask:
      return "wait_ask";
    case Kind::wait_answer:
      return "wait_answer";
    case Kind::wait_deadlock:
      return "wait_deadlock";
  }
  return "?";
}

void post(int dest, int tag, const Header& header, const void* payload, std::size_t bytes) {
  Pending& p = outbox().emplace_back();
  p.dest = dest;
  p.buffer.resize(sizeof(Header) + bytes);
  std::memcpy(p.buffer.data(), &header, sizeof(Header));
  if (bytes) std::memcpy(p.buffer.data() + sizeof(Header), payload, bytes);
  CPLAB_CHECK(p.buffer.size() <= static_cast<std::size_t>(INT32_MAX),
              "a message of {} bytes is larger than one MPI send", p.buffer.size());
  const int code = MPI_Isend(p.buffer.data(), static_cast<int>(p.buffer.size()), MPI_BYTE, dest,
                             tag, channel(), &p.request);
  if (code != MPI_SUCCESS) {
    outbox().pop_back();
    CPLAB_FAIL("MPI_Isend to rank {} failed: {}", dest, mpi_error_text(code));
  }
  if (is_data(tag)) count_sent(dest, tag);
  progress_sends();
  maybe_die_mid_message(p.buffer.size());
}

void post_abort(int size, int self, std::uint32_t epoch, const std::string& message) {
  Header header;
  header.epoch = epoch;
  header.kind = Kind::abort;
  header.count = message.size();
  for (int r = 0; r < size; ++r) {
    if (r != self) post(r, kAbortTag, header, message.data(), message.size());
  }
}

namespace {

// One collect's messages: those taken, by source, and those whose body is still arriving (given
// up on, left to MPI, if the wait ends first).
class Collection {
 public:
  Collection(int tag, std::uint32_t epoch, const std::string& where, WaitScope& watch)
      : tag_(tag), epoch_(epoch), where_(where), watch_(watch) {}
  ~Collection() {
    for (auto& [source, in] : arriving) abandon(std::move(in));
  }
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  // What has arrived from each source not yet heard from.
  void receive(const std::vector<int>& sources) {
    for (int source : sources) {
      if (got.count(source)) continue;
      if (auto it = arriving.find(source); it != arriving.end()) {
        if (!body_arrived(it->second)) continue;
        const Incoming in = std::move(it->second);
        arriving.erase(it);
        take(source, in);
        continue;
      }
      for (Incoming in; !got.count(source) && start_receive(source, tag_, in); in = Incoming{}) {
        if (!body_arrived(in)) {
          arriving.emplace(source, std::move(in));
          break;
        }
        take(source, in);
      }
    }
  }

  std::map<int, Message> got;
  std::map<int, Incoming> arriving;

 private:
  // A received message of this run counts; one left unread by an earlier, failed run is dropped.
  void take(int source, const Incoming& in) {
    Message m = unpack(in, tag_);
    if (m.header.epoch < epoch_) return;
    CPLAB_CHECK(m.header.epoch == epoch_,
                "{}: rank {} is already in a later run ({} > {}): the ranks are out of step",
                where_, source, m.header.epoch, epoch_);
    got.emplace(source, std::move(m));
    watch_.arrived(source);
  }

  int tag_;
  std::uint32_t epoch_;
  const std::string& where_;
  WaitScope& watch_;
};

// Stops a wait when a rank gave up on the world, or, with watch_abort, failed in this run.
void stop_on_failure_notice(const std::string& where, std::uint32_t epoch, bool watch_abort) {
  if (Message m; try_receive_from(MPI_ANY_SOURCE, kLostTag, m)) {
    const std::string text(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    const std::string message = fmt::format("{}: rank {} gave up: {}", where, m.source, text);
    mark_lost(message);
    throw Stopped(message);
  }
  if (watch_abort) {
    Message m;
    while (try_receive_from(MPI_ANY_SOURCE, kAbortTag, m)) {
      if (m.header.epoch != epoch) continue;
      const std::string text(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
      throw Stopped(fmt::format("{}: rank {} failed: {}", where, m.source, text));
    }
  }
}

// Which ranks a wait that timed out heard nothing from, those whose message began and never
// completed, and what the silent ones wait for in turn.
std::string no_word_failure(const std::vector<int>& sources, const Collection& messages,
                            const Waiting& what, const std::string& where,
                            std::int64_t timeout_ms) {
  std::vector<int> missing, arrived = {what.rank}, midway;
  for (int source : sources) (messages.got.count(source) ? arrived : missing).push_back(source);
  for (const auto& [source, in] : messages.arriving) midway.push_back(source);
  std::sort(arrived.begin(), arrived.end());
  // A silent rank that waits itself, for another silent one, is not the one to name: say
  // what it waits for, and name the rest (unless every silent rank waits: a cycle).
  std::vector<int> named = missing;
  std::string in_turn;
  for (const WaitingInTurn& turn : waiting_in_turn(missing)) {
    named.erase(std::remove(named.begin(), named.end(), turn.rank), named.end());
    in_turn +=
        fmt::format("; rank {} waits in turn for rank{} {}, {}", turn.rank,
                    turn.sources.size() == 1 ? "" : "s", ranks_text(turn.sources), turn.call);
  }
  if (named.empty()) named = missing;
  return fmt::format(
      "{}: no word from rank{} {} within {} ms (arrived: {}{}{}); a rank is gone, stuck or "
      "called another collective",
      where, named.size() == 1 ? "" : "s", ranks_text(named), timeout_ms, ranks_text(arrived),
      in_turn,
      midway.empty() ? std::string()
                     : fmt::format("; begun and never completed: the message of rank{} {}",
                                   midway.size() == 1 ? "" : "s", ranks_text(midway)));
}

}  // namespace

std::map<int, Message> collect(const std::vector<int>& sources, int tag, std::uint32_t epoch,
                               std::int64_t timeout_ms, bool watch_abort, const Waiting& what) {
  const std::string where = fmt::format("rank {}/{}: {}", what.rank, what.size, what.call);
  CPLAB_CHECK(!lost(), "{}: the MPI world is lost: {}", where, lost_reason());
  const std::int64_t deadline = now_ms() + timeout_ms;
  WaitScope watch(what.activity, sources, tag, what.stoppable, where);
  Collection messages(tag, epoch, where, watch);
  for (int round = 0;; ++round) {
    progress_sends();
    CPLAB_CHECK(g_send_error.empty(), "{}: {}", where, g_send_error);
    messages.receive(sources);
    if (messages.got.size() == sources.size()) return std::move(messages.got);
    stop_on_failure_notice(where, epoch, watch_abort);
    watch.poll();
    if (now_ms() >= deadline) {
      const std::string message = no_word_failure(sources, messages, what, where, timeout_ms);
      lose_world(message);
      throw Stopped(message);
    }
    pause(round);
  }
}

void drain_sends(std::int64_t timeout_ms) {
  const std::int64_t deadline = now_ms() + timeout_ms;
  for (int round = 0; !outbox().empty() && now_ms() < deadline; ++round) {
    progress_sends();
    pause(round);
  }
  // What nobody will receive (left unread by a failed run): let MPI forget it; its buffer stays.
  for (Pending& p : outbox()) {
    if (p.request != MPI_REQUEST_NULL) MPI_Request_free(&p.request);
  }
}

int max_user_tag() {
  void* value = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(channel(), MPI_TAG_UB, &value, &flag);
  const int ub = flag ? *static_cast<int*>(value) : 32767;
  return ub - kUserTagBase;
}

}  // namespace cplab::mpi::detail
