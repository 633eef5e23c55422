#pragma once
// One rank's view of a collective run, for timing that rank's own work: RecordingComm forwards
// to a real comm (a ThreadComm of a World) and keeps what every call delivered to this rank;
// ReplayComm then delivers the same bytes again, call after call (cycling), with one memcpy of
// the delivered bytes per call: what receiving them costs in shared memory. A call that does not
// match the recording (another collective, another size) throws.
#include <cstddef>
#include <vector>

#include "comm/comm.hpp"

namespace cplab::bench {

struct Delivery {
  std::string call;
  std::vector<std::byte> bytes;
};

class RecordingComm final : public Comm {
 public:
  explicit RecordingComm(Comm& inner) : inner_(inner) {}
  const std::vector<Delivery>& deliveries() const { return deliveries_; }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string name() const override { return "recording:" + inner_.name(); }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }

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
  void keep(const char* call, const void* data, std::size_t bytes);
  Comm& inner_;
  std::vector<Delivery> deliveries_;
};

class ReplayComm final : public Comm {
 public:
  ReplayComm(int rank, int size, std::vector<Delivery> deliveries)
      : rank_(rank), size_(size), deliveries_(std::move(deliveries)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "replay"; }
  std::uint64_t bytes_sent() const override { return 0; }

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
  void deliver(const char* call, void* data, std::size_t bytes);
  int rank_, size_;
  std::vector<Delivery> deliveries_;
  std::size_t next_ = 0;
};

}  // namespace cplab::bench
