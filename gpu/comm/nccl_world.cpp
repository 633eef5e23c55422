// NcclWorld: one process driving several GPUs (ncclCommInitAll), one host thread per device.
#include <nccl.h>

#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "gpu/comm/nccl_comm.hpp"
#include "gpu/cuda_check.hpp"

namespace cplab::gpu {

NcclWorld::NcclWorld(std::vector<int> devices, std::chrono::milliseconds timeout) {
  CPLAB_CHECK(!devices.empty(), "NcclWorld needs at least one device");
  const int available = device_count();
  for (int d : devices) {
    CPLAB_CHECK(d >= 0 && d < available, "NcclWorld: device {} outside the {} visible devices", d,
                available);
  }
  std::vector<ncclComm_t> comms(devices.size());
  CPLAB_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  for (std::size_t r = 0; r < comms.size(); ++r)
    comms_.push_back(std::make_unique<NcclComm>(comms[r], devices[r], timeout, true));
}

NcclWorld::~NcclWorld() {
  // Destroying is collective over the world's communicators: one after another from one thread,
  // the first can wait for a peer whose destroy has not begun. So every rank's at once, one
  // thread each; and when any was aborted (a failed or late collective), abort them all, which
  // waits for no one.
  bool broken = false;
  for (const auto& comm : comms_) broken = broken || comm->broken();
  if (broken) {
    for (auto& comm : comms_) comm->abort();
    return;
  }
  try {
    std::vector<std::thread> threads;
    for (auto& comm : comms_) threads.emplace_back([&comm] { comm.reset(); });
    for (auto& t : threads) t.join();
  } catch (...) {
    // No thread to be had: abort what is left rather than risk waiting on a peer.
    for (auto& comm : comms_) {
      if (comm) comm->abort();
    }
  }
}

NcclComm& NcclWorld::comm(int rank) {
  CPLAB_CHECK(rank >= 0 && rank < size(), "nccl rank {} outside [0, {})", rank, size());
  return *comms_[static_cast<std::size_t>(rank)];
}

void NcclWorld::run(const std::function<void(NcclComm&)>& fn) {
  std::mutex mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < size(); ++r) {
    threads.emplace_back([&, r] {
      ScopedRankTag tag(r, size());
      try {
        set_device(comms_[static_cast<std::size_t>(r)]->device());
        fn(*comms_[static_cast<std::size_t>(r)]);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace cplab::gpu
