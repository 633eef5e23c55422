#pragma once
// A Comm whose buffers are device memory: the GPU implementation hands it device pointers and
// orders its kernels on the comm's stream. Comms that are not DeviceComms (ThreadComm) get host
// buffers, staged by the implementation.
#include "comm/comm.hpp"
#include "gpu/device.hpp"

namespace cplab::gpu {

// How the GPU implementation talks to the other ranks of the host comm it is given:
//   host        through that comm itself, staging device data through host memory;
//   device_sim  C virtual ranks on one GPU, collectives as device-to-device copies;
//   nccl        one GPU per rank (C must not exceed the visible devices), NCCL collectives.
// device_sim and nccl are set up collectively over the given comm on first use.
enum class GpuCommKind : std::uint8_t { host, device_sim, nccl };
const char* gpu_comm_kind_name(GpuCommKind kind);  // "host", "device-sim", "nccl"

class DeviceComm : public Comm {
 public:
  virtual int device() const = 0;
  // Collectives are ordered on this stream and complete before they return; the rank's kernels
  // run on it too.
  virtual Stream stream() const = 0;
  // True once a failure (a timeout, an aborted communicator) has left the group unusable.
  virtual bool broken() const = 0;
};

}  // namespace cplab::gpu
