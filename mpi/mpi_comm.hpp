#pragma once
// The Comm interface over MPI: one process per rank, host memory. The group is world ranks
// [0, size) of the running MPI job (a world of one without a launcher).
//
//   MpiComm comm(4, epoch, std::chrono::milliseconds(20000));   // on each of 4 processes
//   comm.all_gather(...);
//
// Same promise as ThreadComm: every collective completes on every rank or throws cplab::Error
// naming the call, the ranks that arrived and the ones that did not, within the timeout; sizes
// travel with every message, so a disagreement (count, dtype, or another collective called) is a
// named error, never undefined behaviour. A rank that fails tells the others (`abort_run`), who
// stop at once rather than at the timeout.
//
// `epoch` tells runs apart: every process must make its MpiComms with the same epochs in the same
// order (what is left unread from an earlier, failed run is dropped, never mistaken for this
// run's).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace cplab::mpi {

class MpiComm final : public Comm {
 public:
  MpiComm(int size, std::uint32_t epoch, std::chrono::milliseconds timeout);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  std::uint64_t bytes_sent() const override { return bytes_sent_; }

  // This rank failed: the other ranks of the group stop waiting for it at once.
  void abort_run(const std::string& message);

  // One rank's contribution to a collective, as received.
  struct Part {
    std::size_t count = 0;
    DType dtype = DType::u8;
    std::vector<std::byte> bytes;
  };

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
  // Sends `blocks` (one for every rank when per_rank, else the same to all) and receives every
  // rank's; parts[r] is rank r's (this rank's own included), checked to be the same call.
  std::vector<Part> exchange(int kind, const void* data, std::size_t count, DType dtype,
                             bool per_rank);
  void check_peer(int peer, const char* what) const;
  // What this process is doing between calls (told by the launcher's SIGTERM handler).
  std::string computing() const;

  int rank_ = 0, size_ = 1;
  std::uint32_t epoch_ = 0;
  std::uint64_t seq_ = 0;
  std::chrono::milliseconds timeout_;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace cplab::mpi
