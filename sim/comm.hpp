#pragma once
// What a CP rank needs from its group. ThreadComm (host memory, one thread per virtual rank),
// NcclComm and the one-GPU device-sim comm (device memory) implement it. Buffers are plain
// pointers into the memory the implementation works on; counts are elements of `dtype`. Each
// rank's buffers are its own, as each GPU's memory is under NCCL: no rank receives into memory
// another rank sends from in the same call (ThreadComm reads large parts in place from their
// senders while the others write their outputs).
//
// Every collective either completes on every rank or throws cplab::Error naming the collective,
// the ranks that arrived and the ones that did not (or the sizes that disagree): never a hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/types/dtype.hpp"

namespace cplab {

enum class ReduceOp : std::uint8_t { sum, max };

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "thread", "nccl", "device-sim"

  // recv[r·count + i] = send_of_rank_r[i]. Every rank must pass the same count (checked).
  virtual void all_gather(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  // Variable sizes: counts[r] = what rank r sends (exchanged by the call); recv holds them in rank
  // order and must have room for the sum. Returns the counts.
  virtual std::vector<std::size_t> all_gather_v(const void* send, std::size_t count, void* recv,
                                                std::size_t recv_capacity, DType dtype) = 0;
  // In place.
  virtual void all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) = 0;
  // send has size()·count elements; rank r receives the reduction of every rank's block r.
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                              ReduceOp op) = 0;
  // Block p of send (count elements) goes to rank p; recv block p comes from rank p.
  virtual void all_to_all(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  // Point to point, matched by (peer, tag). Sizes must agree (checked).
  virtual void send(const void* buf, std::size_t count, DType dtype, int peer, int tag) = 0;
  virtual void recv(void* buf, std::size_t count, DType dtype, int peer, int tag) = 0;
  // A paired exchange that cannot deadlock: send to `to` and receive from `from` at once.
  virtual void send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                         std::size_t recv_count, int from, DType dtype, int tag) = 0;
  virtual void barrier() = 0;

  // Bytes this rank has put on the wire so far (the cost model reads it).
  virtual std::uint64_t bytes_sent() const = 0;
};

}  // namespace cplab
