#include "gpu/comm/bootstrap.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "comm/rank_threads.hpp"
#include "core/error.hpp"
#include "gpu/comm/device_sim_comm.hpp"
#include "gpu/comm/nccl_comm.hpp"

namespace cplab::gpu {
namespace {

// A device-sim rank leaves its world when its thread ends or it moves to another group, so that
// ranks still waiting for it there are told at once (the world's deadlock check counts it gone).
struct LeaveOnExit {
  std::weak_ptr<DeviceSimWorld> world;
  int rank = -1;
  ~LeaveOnExit() {
    if (const auto alive = world.lock()) alive->leave(rank);
  }
};

// One cached device comm per thread and kind: the rank threads of a host group each hold theirs.
struct Cached {
  const Comm* host = nullptr;
  int rank = -1, size = 0;
  std::int64_t token = 0;                 // the group's identity, the same on all its ranks
  std::shared_ptr<DeviceSimWorld> world;  // device_sim: keeps the world alive while a rank uses it
  std::unique_ptr<DeviceComm> own;        // nccl: this rank's communicator
  DeviceComm* comm = nullptr;
  std::unique_ptr<LeaveOnExit> leave;  // device_sim
};

// Device-sim worlds made by a rank 0 and not yet picked up by every rank, by token.
std::mutex registry_mu;
std::map<std::int64_t, std::weak_ptr<DeviceSimWorld>>& registry() {
  static std::map<std::int64_t, std::weak_ptr<DeviceSimWorld>> worlds;
  return worlds;
}
std::atomic<std::int64_t> next_token{1};

// What rank 0 sends every rank: the token, and for NCCL the unique id.
struct Handle {
  std::int64_t token = 0;
  NcclId id{};
};

}  // namespace

const char* gpu_comm_kind_name(GpuCommKind kind) {
  switch (kind) {
    case GpuCommKind::host:
      return "host";
    case GpuCommKind::device_sim:
      return "device-sim";
    case GpuCommKind::nccl:
      return "nccl";
  }
  return "?";
}

DeviceComm& device_comm_for(Comm& host, GpuCommKind kind, std::chrono::milliseconds timeout) {
  if (auto* device = dynamic_cast<DeviceComm*>(&host)) return *device;
  CPLAB_CHECK(kind != GpuCommKind::host,
              "device_comm_for: the host kind uses the given comm directly");
  thread_local std::map<GpuCommKind, Cached> cache;
  // A host group's rank threads are reused from run to run: the cache ends with the rank.
  if (cache.empty()) sim::at_rank_end([] { cache.clear(); });
  Cached& mine = cache[kind];
  const int rank = host.rank(), size = host.size();
  const bool same = mine.host == &host && mine.rank == rank && mine.size == size &&
                    mine.comm != nullptr && !mine.comm->broken();

  // Reuse only when every rank holds the same healthy group: then they are exactly its ranks.
  std::int64_t token = same ? mine.token : 0;
  std::vector<std::int64_t> tokens(static_cast<std::size_t>(size));
  host.all_gather({&token, sizeof token}, bytes_of(tokens), 1, DType::i64);
  bool reuse = token != 0;
  for (std::int64_t t : tokens) reuse = reuse && t == token;
  if (reuse) return *mine.comm;

  mine = Cached{};
  Handle handle;
  if (rank == 0) {
    handle.token = next_token++;
    if (kind == GpuCommKind::device_sim) {
      mine.world = std::make_shared<DeviceSimWorld>(
          size, DeviceSimOptions{.timeout = timeout, .device = current_device()});
      std::lock_guard lock(registry_mu);
      registry()[handle.token] = mine.world;
    } else {
      handle.id = nccl_unique_id();
    }
  }
  std::vector<Handle> handles(static_cast<std::size_t>(size));
  host.all_gather({&handle, sizeof handle}, bytes_of(handles), sizeof(Handle), DType::u8);
  handle = handles[0];

  if (kind == GpuCommKind::device_sim) {
    if (rank != 0) {
      std::lock_guard lock(registry_mu);
      mine.world = registry()[handle.token].lock();
    }
    CPLAB_CHECK(mine.world != nullptr, "device-sim bootstrap: rank {} found no world for token {}",
                rank, handle.token);
    mine.comm = &mine.world->comm(rank);
    mine.leave.reset(new LeaveOnExit{mine.world, rank});
    // Every rank holds the world now; the registry entry is no longer needed.
    host.barrier();
    if (rank == 0) {
      std::lock_guard lock(registry_mu);
      registry().erase(handle.token);
    }
  } else {
    const int devices = device_count();
    CPLAB_CHECK(
        size <= devices,
        "nccl needs one GPU per rank: cp={} but {} visible devices (use device-sim for more "
        "ranks than GPUs)",
        size, devices);
    mine.own = NcclComm::init_rank(handle.id, size, rank, rank, timeout);
    mine.comm = mine.own.get();
  }
  mine.host = &host;
  mine.rank = rank;
  mine.size = size;
  mine.token = handle.token;
  return *mine.comm;
}

}  // namespace cplab::gpu
