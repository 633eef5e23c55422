#pragma once
// The device comm of the calling rank for the group of a host comm (a ThreadComm, say), set up
// collectively the first time the group asks, the way NCCL is bootstrapped over MPI: rank 0 makes
// the group (a device-sim world, or an NCCL unique id), its handle travels over the host comm, and
// every rank joins. While the same ranks call again with the same host comm, the comm is reused.
#include <chrono>

#include "gpu/comm/device_comm.hpp"

namespace cplab::gpu {

// kind device_sim or nccl (host needs no device comm). When `host` is itself a DeviceComm it is
// returned as it is. nccl puts rank r on device r and needs C <= the visible devices.
DeviceComm& device_comm_for(Comm& host, GpuCommKind kind,
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));

}  // namespace cplab::gpu
