#pragma once
// What one verb call of the gpu implementation runs with: the rank's device and stream, and
// collectives over device buffers whatever memory the underlying comm works on (a DeviceComm gets
// the device pointers; any other comm gets host copies, staged here).
#include "gpu/comm/device_comm.hpp"

namespace cplab::gpu {

class RankContext {
 public:
  // Sets the calling thread's device: the device comm's, or rank mod visible devices for `host`.
  RankContext(Comm& comm, GpuCommKind kind);

  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  Stream stream() const { return stream_; }

  // Comm's collectives over device buffers. The counts are checked against the buffers' sizes
  // before anything is staged or sent (check_comm_buffer), on either kind of comm.
  void all_gather(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count, DType dtype);
  void all_reduce(DeviceBuffer& buf, std::size_t count, DType dtype, ReduceOp op);
  void reduce_scatter(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count, DType dtype,
                      ReduceOp op);
  void all_to_all(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count, DType dtype);
  // `count` elements of `send` to rank `to` while as many arrive in `recv` from rank `from` (one
  // step of a ring: every rank calls it at once, and none deadlocks).
  void send_recv(const DeviceBuffer& send, int to, DeviceBuffer& recv, int from, std::size_t count,
                 DType dtype, int tag);

 private:
  Comm* comm_;
  bool device_memory_;  // the comm takes device pointers
  Stream stream_;
};

}  // namespace cplab::gpu
