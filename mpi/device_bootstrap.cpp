#include "mpi/device_bootstrap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>

#include "core/error.hpp"
#include "mpi/rank_runner.hpp"
#include "mpi/session.hpp"

namespace cplab::mpi {
namespace {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

// '+' then the payload, or '-' then the error message.
std::string ok(const std::string& payload) { return "+" + payload; }
std::string failed(const std::string& message) { return "-" + message; }

// Throws the first process's failure, on every process.
void throw_first_failure(const std::vector<std::string>& all, const char* stage) {
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].empty() && all[r][0] == '-')
      CPLAB_FAIL("NCCL over MPI: rank {} failed {}: {}", r, stage, all[r].substr(1));
  }
}

}  // namespace

DeviceBootstrap bootstrap_devices(const std::function<int()>& visible_devices,
                                  const std::function<std::string()>& make_id,
                                  std::chrono::milliseconds timeout) {
  const World w = world();
  DeviceBootstrap out;
  DevicePlacement& p = out.placement;
  p.rank = w.rank;
  p.size = w.size;
  p.host = host_name();

  // Where every process is: the node-local rank counts the lower ranks on the same host.
  const std::vector<std::string> hosts = exchange_with_all(p.host, timeout);
  p.local_rank = 0;
  p.local_size = 0;
  for (int r = 0; r < w.size; ++r) {
    if (hosts[static_cast<std::size_t>(r)] != p.host) continue;
    if (r < w.rank) ++p.local_rank;
    ++p.local_size;
  }
  p.device = p.local_rank;

  // Every process checks its node's devices; rank 0 makes the id. One exchange carries both, so a
  // failure anywhere is known everywhere before anyone calls into NCCL.
  std::string mine;
  try {
    const int devices = visible_devices();
    CPLAB_CHECK(p.local_size <= devices, "{} ranks on {} but {} visible GPUs", p.local_size, p.host,
                devices);
    mine = ok(w.rank == 0 ? make_id() : std::string());
  } catch (const std::exception& e) {
    mine = failed(e.what());
  }
  const std::vector<std::string> all = exchange_with_all(mine, timeout);
  throw_first_failure(all, "before ncclCommInitRank");
  out.id = all[0].substr(1);
  return out;
}

}  // namespace cplab::mpi
