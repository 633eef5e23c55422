// The MPI job's processes as the ranks of a property's computation (builds with MPI).
#include "mpi/rank_runner.hpp"
#include "mpi/session.hpp"
#include "properties/harness.hpp"
#include "properties/rank_processes.hpp"

namespace cplab::properties {
namespace {

class MpiRankProcesses final : public RankProcesses {
 public:
  int world_size() override { return mpi::world().size; }
  int world_rank() override { return mpi::world().rank; }
  std::vector<std::string> run(std::int64_t cp,
                               const std::function<std::string(Comm&, std::int64_t)>& fn) override {
    return mpi::run_ranks_as_processes(static_cast<int>(cp),
                                       std::chrono::milliseconds(rank_process_timeout_ms()),
                                       [&](Comm& comm, int rank) { return fn(comm, rank); });
  }
  std::vector<std::string> exchange_all(const std::string& mine, std::int64_t timeout_ms) override {
    return mpi::exchange_with_all(mine, std::chrono::milliseconds(timeout_ms));
  }
};

}  // namespace

RankProcesses* mpi_rank_processes() {
  static MpiRankProcesses processes;
  return &processes;
}

int launcher_processes() { return mpi::launcher_world_size(); }

}  // namespace cplab::properties
