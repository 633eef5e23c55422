#include "mpi/wait_monitor.hpp"

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "mpi/session.hpp"
#include "mpi/transport.hpp"

namespace cplab::mpi::detail {
namespace {

using ChannelCounts = std::map<std::pair<int, int>, std::uint64_t>;  // (peer, tag) -> messages

// What one process waits for, as it reports it.
struct WaitState {
  std::uint64_t version = 0;
  bool waiting = false;
  bool stoppable = false;
  sim::RankActivity activity;
  int tag = 0;                                             // the channel tag it waits on
  std::vector<std::pair<int, std::uint64_t>> outstanding;  // (source, received so far)
  ChannelCounts sent;
};

// A confirmation this process asked for: every process's version as its report had it.
struct Ask {
  bool open = false;
  std::uint64_t id = 0;
  std::vector<std::uint64_t> versions;
  std::vector<char> confirmed;
};

struct Monitor {
  ChannelCounts sent, received;
  std::uint64_t version = 1;
  std::int64_t changed_ms = 0;
  // This process's wait (active while a WaitScope lives).
  bool active = false;
  bool stoppable = false;
  sim::RankActivity activity;
  std::vector<int> outstanding;
  int tag = 0;
  std::string where;
  std::uint64_t reported = 0;  // the version last reported (0: none)
  std::vector<WaitState> peers;
  Ask ask;
  std::uint64_t asks = 0;
  std::vector<std::uint64_t> last_asked;
};

Monitor& monitor() {
  static Monitor m;
  return m;
}

void bump() {
  Monitor& m = monitor();
  ++m.version;
  m.changed_ms = now_ms();
}

std::string encode(const WaitState& s) {
  std::string outstanding, sent;
  for (const auto& [source, n] : s.outstanding) outstanding += fmt::format("{}:{} ", source, n);
  for (const auto& [key, n] : s.sent) sent += fmt::format("{}:{}:{} ", key.first, key.second, n);
  return fmt::format("{} {} {} {} {} {} {} {}\n{}\n{}\n{}", s.version, s.waiting ? 1 : 0,
                     s.stoppable ? 1 : 0, static_cast<int>(s.activity.kind), s.activity.seq,
                     s.activity.peer, s.activity.tag, s.tag, s.activity.call, outstanding, sent);
}

bool decode(const std::string& text, WaitState& s) {
  std::istringstream in(text);
  std::string head, call, outstanding, sent;
  if (!std::getline(in, head) || !std::getline(in, call)) return false;
  std::getline(in, outstanding);
  std::getline(in, sent);
  std::istringstream h(head);
  int waiting = 0, stoppable = 0, kind = 0;
  if (!(h >> s.version >> waiting >> stoppable >> kind >> s.activity.seq >> s.activity.peer >>
        s.activity.tag >> s.tag))
    return false;
  s.waiting = waiting == 1;
  s.stoppable = stoppable == 1;
  s.activity.kind = static_cast<sim::RankActivity::Kind>(kind);
  s.activity.call = call;
  std::istringstream o(outstanding);
  for (std::string item; o >> item;) {
    int source = -1;
    unsigned long long n = 0;
    if (std::sscanf(item.c_str(), "%d:%llu", &source, &n) != 2) return false;
    s.outstanding.emplace_back(source, n);
  }
  std::istringstream d(sent);
  for (std::string item; d >> item;) {
    int dest = -1, tag = 0;
    unsigned long long n = 0;
    if (std::sscanf(item.c_str(), "%d:%d:%llu", &dest, &tag, &n) != 3) return false;
    s.sent[{dest, tag}] = n;
  }
  return true;
}

WaitState own_state() {
  const Monitor& m = monitor();
  WaitState s;
  s.version = m.version;
  s.waiting = m.active;
  s.stoppable = m.stoppable;
  s.activity = m.activity;
  s.tag = m.tag;
  for (int source : m.outstanding) {
    const auto it = m.received.find({source, m.tag});
    s.outstanding.emplace_back(source, it == m.received.end() ? 0 : it->second);
  }
  s.sent = m.sent;
  return s;
}

void post_text(int dest, Kind kind, std::uint64_t seq, const std::string& text) {
  Header header;
  header.kind = kind;
  header.seq = seq;
  header.count = text.size();
  post(dest, kMonitorTag, header, text.data(), text.size());
}

void broadcast(Kind kind, std::uint64_t seq, const std::string& text) {
  const World w = world();
  for (int q = 0; q < w.size; ++q) {
    if (q != w.rank) post_text(q, kind, seq, text);
  }
}

std::string versions_text(const std::vector<std::uint64_t>& versions) {
  return fmt::format("{}", fmt::join(versions, " "));
}

std::vector<std::uint64_t> parse_versions(const std::string& line) {
  std::vector<std::uint64_t> out;
  std::istringstream in(line);
  for (std::uint64_t v; in >> v;) out.push_back(v);
  return out;
}

// Every process's state as this one knows it (its own as it is now).
std::vector<WaitState> all_states() {
  const World w = world();
  std::vector<WaitState> states = monitor().peers;
  states.resize(static_cast<std::size_t>(w.size));
  states[static_cast<std::size_t>(w.rank)] = own_state();
  return states;
}

// Every process waits, some wait belongs to a run, and no channel anybody waits on has a message
// on its way (by the reports' counts).
bool looks_stuck(const std::vector<WaitState>& states) {
  bool any_stoppable = false;
  for (std::size_t q = 0; q < states.size(); ++q) {
    const WaitState& s = states[q];
    if (s.version == 0 || !s.waiting) return false;
    any_stoppable = any_stoppable || s.stoppable;
    for (const auto& [source, received] : s.outstanding) {
      if (source < 0 || source >= static_cast<int>(states.size())) return false;
      const ChannelCounts& sent = states[static_cast<std::size_t>(source)].sent;
      const auto it = sent.find({static_cast<int>(q), s.tag});
      if ((it == sent.end() ? 0 : it->second) != received) return false;
    }
  }
  return any_stoppable;
}

std::string picture_of(const std::vector<WaitState>& states) {
  std::vector<sim::RankActivity> ranks;
  for (const WaitState& s : states) ranks.push_back(s.activity);
  return fmt::format(
      "deadlock: every process of the job waits and nothing is on its way to any of them: {}",
      sim::wait_for_picture(ranks));
}

[[noreturn]] void stop(const std::string& picture) {
  throw Stopped(fmt::format("{}: {}", monitor().where, picture));
}

void on_message(const Message& msg) {
  Monitor& m = monitor();
  const World w = world();
  const std::string text(reinterpret_cast<const char*>(msg.payload.data()), msg.payload.size());
  switch (msg.header.kind) {
    case Kind::wait_report: {
      WaitState s;
      if (!decode(text, s) || msg.source < 0 || msg.source >= w.size) return;
      m.peers.resize(static_cast<std::size_t>(w.size));
      WaitState& known = m.peers[static_cast<std::size_t>(msg.source)];
      if (s.version >= known.version) known = std::move(s);
      return;
    }
    case Kind::wait_ask: {
      const std::vector<std::uint64_t> versions = parse_versions(text);
      const bool same = m.active && static_cast<int>(versions.size()) == w.size &&
                        versions[static_cast<std::size_t>(w.rank)] == m.version;
      post_text(msg.source, Kind::wait_answer, msg.header.seq, same ? "1" : "0");
      return;
    }
    case Kind::wait_answer:
      if (!m.ask.open || msg.header.seq != m.ask.id) return;
      if (text != "1") {
        m.ask.open = false;
        return;
      }
      m.ask.confirmed[static_cast<std::size_t>(msg.source)] = 1;
      return;
    case Kind::wait_deadlock: {
      const std::size_t newline = text.find('\n');
      const std::vector<std::uint64_t> versions = parse_versions(text.substr(0, newline));
      if (m.active && m.stoppable && static_cast<int>(versions.size()) == w.size &&
          versions[static_cast<std::size_t>(w.rank)] == m.version && newline != std::string::npos)
        stop(text.substr(newline + 1));
      return;
    }
    default:
      return;
  }
}

}  // namespace

void count_sent(int dest, int tag) {
  ++monitor().sent[{dest, tag}];
  bump();
}

void count_received(int source, int tag) {
  ++monitor().received[{source, tag}];
  bump();
}

std::vector<WaitingInTurn> waiting_in_turn(const std::vector<int>& ranks) {
  const Monitor& m = monitor();
  const World w = world();
  std::vector<WaitingInTurn> out;
  for (int q : ranks) {
    if (q < 0 || q >= static_cast<int>(m.peers.size()) || q == w.rank) continue;
    const WaitState& s = m.peers[static_cast<std::size_t>(q)];
    if (s.version == 0 || !s.waiting || s.outstanding.empty()) continue;
    const bool fresh = std::all_of(m.received.begin(), m.received.end(), [&](const auto& entry) {
      if (entry.first.first != q) return true;
      const auto sent = s.sent.find({w.rank, entry.first.second});
      return entry.second <= (sent == s.sent.end() ? 0 : sent->second);
    });
    if (!fresh) continue;
    WaitingInTurn turn;
    turn.rank = q;
    for (const auto& [source, received] : s.outstanding) turn.sources.push_back(source);
    turn.call = s.activity.kind == sim::RankActivity::Kind::finished ? "for " + s.activity.call
                                                                     : sim::doing(s.activity);
    out.push_back(std::move(turn));
  }
  return out;
}

WaitScope::WaitScope(const sim::RankActivity& activity, const std::vector<int>& sources, int tag,
                     bool stoppable, std::string where) {
  Monitor& m = monitor();
  m.active = true;
  m.stoppable = stoppable;
  m.activity = activity;
  m.outstanding = sources;
  m.tag = tag;
  m.where = std::move(where);
  bump();
}

WaitScope::~WaitScope() {
  Monitor& m = monitor();
  m.active = false;
  m.outstanding.clear();
  m.ask.open = false;
  bump();
}

void WaitScope::arrived(int source) {
  Monitor& m = monitor();
  m.outstanding.erase(std::remove(m.outstanding.begin(), m.outstanding.end(), source),
                      m.outstanding.end());
  bump();
}

void WaitScope::poll() {
  Monitor& m = monitor();
  const World w = world();
  if (w.size < 2) return;
  m.peers.resize(static_cast<std::size_t>(w.size));
  Message msg;
  while (try_receive_from(MPI_ANY_SOURCE, kMonitorTag, msg)) on_message(msg);

  if (m.ask.open && m.ask.versions[static_cast<std::size_t>(w.rank)] != m.version)
    m.ask.open = false;
  if (m.ask.open &&
      std::all_of(m.ask.confirmed.begin(), m.ask.confirmed.end(), [](char c) { return c != 0; })) {
    // Every process confirmed that it has not moved since its report: deadlocked.
    m.ask.open = false;
    std::vector<WaitState> states = all_states();
    const std::string picture = picture_of(states);
    broadcast(Kind::wait_deadlock, m.ask.id, versions_text(m.ask.versions) + "\n" + picture);
    if (m.stoppable) stop(picture);
  }

  // Report a wait once it has stayed unchanged a little while (short waits never report).
  if (m.reported != m.version && now_ms() - m.changed_ms >= kQuietMs) {
    m.reported = m.version;
    broadcast(Kind::wait_report, m.version, encode(own_state()));
  }
  if (m.reported != m.version || m.ask.open) return;
  const std::vector<WaitState> states = all_states();
  if (!looks_stuck(states)) return;
  std::vector<std::uint64_t> versions;
  for (const WaitState& s : states) versions.push_back(s.version);
  if (versions == m.last_asked) return;  // asked already; a newer report may ask again
  m.last_asked = versions;
  m.ask.open = true;
  m.ask.id = (static_cast<std::uint64_t>(w.rank) << 40) | ++m.asks;
  m.ask.versions = versions;
  m.ask.confirmed.assign(static_cast<std::size_t>(w.size), 0);
  m.ask.confirmed[static_cast<std::size_t>(w.rank)] = 1;
  broadcast(Kind::wait_ask, m.ask.id, versions_text(versions));
}

}  // namespace cplab::mpi::detail
