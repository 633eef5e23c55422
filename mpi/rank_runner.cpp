#include "mpi/rank_runner.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"
#include "mpi/mpi_comm.hpp"
#include "mpi/session.hpp"
#include "mpi/transport.hpp"

namespace cplab::mpi {
namespace {

std::uint32_t g_epoch = 0;

enum class Status : char { ok = 'o', failed = 'f', stopped = 's', idle = 'i' };

// One status byte, then the result's bytes or the error's text.
std::vector<std::string> exchange(std::uint32_t epoch, const std::string& mine,
                                  std::chrono::milliseconds timeout, const std::string& what) {
  const World w = world();
  set_activity(fmt::format("waiting for {}", what));
  detail::Header header;
  header.epoch = epoch;
  header.kind = detail::Kind::result;
  header.count = mine.size();
  std::vector<int> peers;
  for (int q = 0; q < w.size; ++q) {
    if (q == w.rank) continue;
    peers.push_back(q);
    detail::post(q, detail::kResultTag, header, mine.data(), mine.size());
    // CPLAB_MPI_FAULT_BETWEEN_RESULTS=RANK: killed once one peer has its result, not the rest.
    if (peers.size() == 1) detail::die_if_named("CPLAB_MPI_FAULT_BETWEEN_RESULTS", w.rank);
  }
  // For the deadlock watch this process has left the run: it waits for the others' results.
  sim::RankActivity activity;
  activity.kind = sim::RankActivity::Kind::finished;
  activity.call = what;  // what another process's timeout quotes (the picture says "finished")
  std::map<int, detail::Message> got =
      detail::collect(peers, detail::kResultTag, epoch, timeout.count(), false,
                      {what, w.rank, w.size, activity, false});
  std::vector<std::string> all(static_cast<std::size_t>(w.size));
  for (int q = 0; q < w.size; ++q) {
    if (q == w.rank) {
      all[static_cast<std::size_t>(q)] = mine;
      continue;
    }
    const detail::Message& m = got.at(q);
    all[static_cast<std::size_t>(q)].assign(reinterpret_cast<const char*>(m.payload.data()),
                                            m.payload.size());
  }
  return all;
}

}  // namespace

std::vector<std::string> run_ranks_as_processes(
    int cp, std::chrono::milliseconds timeout,
    const std::function<std::string(Comm& comm, int rank)>& fn) {
  const World w = world();
  CPLAB_CHECK(!lost(), "the MPI world is lost: {}", lost_reason());
  CPLAB_CHECK(cp >= 1 && cp <= w.size,
              "a case of C={} needs at least {} MPI processes; this job has {} (mpirun -np {})", cp,
              cp, w.size, cp);
  detail::await_channel(timeout.count(), fmt::format("rank {}/{}", w.rank, w.size));
  const std::uint32_t epoch = ++g_epoch;
  std::string mine(1, static_cast<char>(Status::idle));
  if (w.rank < cp) {
    MpiComm comm(cp, epoch, timeout);
    ScopedRankTag tag(w.rank, cp);
    Status status = Status::ok;
    std::string out;
    try {
      out = fn(comm, w.rank);
    } catch (const detail::Stopped& e) {
      out = e.what();
      status = Status::stopped;
    } catch (const Error& e) {
      out = e.what();
      status = Status::failed;
    } catch (const std::exception& e) {
      out = fmt::format("rank {}/{}: {}", w.rank, cp, e.what());
      status = Status::failed;
    } catch (...) {
      out = fmt::format("rank {}/{}: unknown exception", w.rank, cp);
      status = Status::failed;
    }
    if (status != Status::ok) comm.abort_run(out);
    mine = std::string(1, static_cast<char>(status)) + out;
  }
  std::vector<std::string> all;
  try {
    all = exchange(epoch, mine, timeout, fmt::format("the results of run {}", epoch));
  } catch (const Error&) {
    // This rank's own failure is the cause; the results of a run that lost a rank cannot all
    // arrive, so which of the two errors came first must not decide what is reported.
    if (mine[0] == static_cast<char>(Status::failed) ||
        mine[0] == static_cast<char>(Status::stopped))
      throw Error(mine.substr(1));
    throw;
  }
  std::vector<std::string> results;
  const std::string* first_stopped = nullptr;
  for (int r = 0; r < cp; ++r) {
    const std::string& blob = all[static_cast<std::size_t>(r)];
    CPLAB_CHECK(!blob.empty(), "rank {} sent an empty result", r);
    const auto status = static_cast<Status>(blob[0]);
    if (status == Status::failed) throw Error(blob.substr(1));
    if (status == Status::stopped && first_stopped == nullptr) first_stopped = &blob;
    results.push_back(blob.substr(1));
  }
  if (first_stopped != nullptr) throw Error(first_stopped->substr(1));
  return results;
}

std::vector<std::string> exchange_with_all(const std::string& mine,
                                           std::chrono::milliseconds timeout) {
  CPLAB_CHECK(!lost(), "the MPI world is lost: {}", lost_reason());
  const World w = world();
  detail::await_channel(timeout.count(), fmt::format("rank {}/{}", w.rank, w.size));
  const std::uint32_t epoch = ++g_epoch;
  return exchange(epoch, mine, timeout, fmt::format("the exchange of run {}", epoch));
}

}  // namespace cplab::mpi
