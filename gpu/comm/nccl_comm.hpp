#pragma once
// NCCL behind the Comm interface, one communicator per rank and one GPU per rank. Three ways in:
//   NcclWorld           one process drives several GPUs (ncclCommInitAll), one host thread each;
//   NcclComm::init_rank one rank of a group whose unique id travelled some other way: over a host
//                       Comm (gpu/comm/bootstrap.hpp) or MPI (gpu/comm/nccl_mpi.hpp, for many
//                       nodes).
// Counts are compared across ranks before every collective (a mismatch is an error on every rank,
// not a hang), and every wait is bounded: past the timeout the communicator is aborted.
#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "gpu/comm/device_comm.hpp"

struct ncclComm;  // what ncclComm_t points to

namespace cplab::gpu {

using NcclId = std::array<char, 128>;  // ncclUniqueId's bytes
NcclId nccl_unique_id();

class NcclComm final : public DeviceComm {
 public:
  static std::unique_ptr<NcclComm> init_rank(const NcclId& id, int nranks, int rank, int device,
                                             std::chrono::milliseconds timeout);
  // Takes ownership of an initialised communicator. `collective_destroy`: destroy it (every rank
  // does, as NcclWorld does) rather than abort it (safe whatever the other ranks do).
  NcclComm(ncclComm* comm, int device, std::chrono::milliseconds timeout, bool collective_destroy);
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }
  int device() const override { return device_; }
  Stream stream() const override { return stream_->get(); }
  bool broken() const override { return comm_ == nullptr; }
  // Tears the communicator down at once, whatever the other ranks do (ncclCommAbort); idempotent.
  void abort();

  std::uint64_t bytes_sent() const override { return bytes_sent_; }

 private:
  void do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) override;
  std::vector<std::size_t> do_all_gather_v(const void* send, std::size_t count, void* recv,
                                           std::size_t recv_capacity, DType dtype) override;
  void do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                         ReduceOp op) override;
  void do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) override;
  // NCCL has no tags: point-to-point messages between two ranks match in the order they are issued.
  void do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) override;
  void do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                    std::size_t recv_count, int from, DType dtype, int tag) override;
  void do_barrier() override;
  struct Meta;
  std::vector<Meta> agree(const char* what, std::size_t count, std::size_t capacity, DType dtype,
                          int op);
  void wait(const char* what);
  void check_alive(const char* what) const;

  ncclComm* comm_;
  int device_, rank_ = 0, size_ = 1;
  std::chrono::milliseconds timeout_;
  bool collective_destroy_;
  std::unique_ptr<StreamOwner> stream_;
  DeviceBuffer meta_;
  std::uint64_t bytes_sent_ = 0;
};

class NcclWorld {
 public:
  explicit NcclWorld(std::vector<int> devices,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));
  ~NcclWorld();
  int size() const { return static_cast<int>(comms_.size()); }
  NcclComm& comm(int rank);
  // fn(comm) on every rank, one host thread per device; rethrows the first failure after all end.
  void run(const std::function<void(NcclComm&)>& fn);

 private:
  std::vector<std::unique_ptr<NcclComm>> comms_;
};

}  // namespace cplab::gpu
