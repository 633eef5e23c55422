#pragma once
// C virtual ranks on ONE GPU, one host thread each: NCCL will not put two ranks on one device and
// many test machines have a single GPU. Collectives are device-to-device copies (and reductions
// applied in rank order, so every rank gets the same bits); a collective a rank never joins, or
// joins with other sizes, ends in cplab::Error on every rank within the timeout, never a hang.
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "gpu/comm/device_comm.hpp"

namespace cplab::gpu {

namespace detail {
struct SimGroup;
}

struct DeviceSimOptions {
  std::chrono::milliseconds timeout{60000};
  int device = -1;  // -1: the device current on the thread that makes the world
};

class DeviceSimComm final : public DeviceComm {
 public:
  DeviceSimComm(std::shared_ptr<detail::SimGroup> group, int rank);
  ~DeviceSimComm() override;

  int rank() const override { return rank_; }
  int size() const override;
  std::string name() const override { return "device-sim"; }
  int device() const override;
  Stream stream() const override { return stream_.get(); }
  bool broken() const override;

  std::uint64_t bytes_sent() const override { return bytes_sent_; }

 private:
  void do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) override;
  std::vector<std::size_t> do_all_gather_v(const void* send, std::size_t count, void* recv,
                                           std::size_t recv_capacity, DType dtype) override;
  void do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                         ReduceOp op) override;
  void do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) override;
  void do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                    std::size_t recv_count, int from, DType dtype, int tag) override;
  void do_barrier() override;
  std::shared_ptr<detail::SimGroup> group_;
  int rank_;
  StreamOwner stream_;
  DeviceBuffer
      scratch_;  // results are built here and copied out after every rank has read its inputs
  std::uint64_t bytes_sent_ = 0;

  void* scratch(std::size_t bytes);
  template <typename Body>
  auto guarded(Body&& body);
};

class DeviceSimWorld {
 public:
  explicit DeviceSimWorld(int size, DeviceSimOptions options = {});
  ~DeviceSimWorld();
  DeviceSimWorld(const DeviceSimWorld&) = delete;
  DeviceSimWorld& operator=(const DeviceSimWorld&) = delete;

  int size() const { return static_cast<int>(comms_.size()); }
  int device() const;
  DeviceSimComm& comm(int rank);
  // fn(comm) on every rank, one host thread each (its device set and its rank tag); after every
  // thread has ended, rethrows the failure that came first. A failing rank breaks the group, so the
  // others stop at their next collective instead of waiting for the timeout.
  void run(const std::function<void(DeviceSimComm&)>& fn);
  // Rank `rank` is gone for good (a bootstrapped rank's thread ended): ranks still waiting for it
  // are told at once, not at their timeout.
  void leave(int rank);

 private:
  std::shared_ptr<detail::SimGroup> group_;
  std::vector<std::unique_ptr<DeviceSimComm>> comms_;
};

}  // namespace cplab::gpu
