#pragma once
// What a CP rank needs from its group. ThreadComm (host memory, one thread per virtual rank),
// NcclComm, MpiComm and the one-GPU device-sim comm (device memory) implement it. Buffers are
// plain pointers into the memory the implementation works on, each with the bytes it holds there;
// counts are elements of `dtype`. Each rank's buffers are its own, as each GPU's memory is under
// NCCL: no rank receives into memory another rank sends from in the same call (ThreadComm reads
// large parts in place from their senders while the others write their outputs).
//
// Every call first checks that its counts fit the buffers it was handed (a send longer than its
// buffer, a receive into too little room), in every build type and before any byte moves: an
// error naming the call, the rank, the count and the buffer, never a read or write past its end.
// Every collective then either completes on every rank or throws cplab::Error naming the
// collective, the ranks that arrived and the ones that did not (or the sizes that disagree):
// never a hang.
//
// The public calls are those checks; each comm implements the protected do_* steps, which run
// only once the buffers have been found to fit.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace cplab {

enum class ReduceOp : std::uint8_t { sum, max };

// Memory a comm call reads: where it starts (host or device memory) and how many bytes are there.
struct ConstBytes {
  const void* data = nullptr;
  std::size_t size = 0;
};
// Memory a comm call writes (or, for all_reduce, reads and writes).
struct Bytes {
  void* data = nullptr;
  std::size_t size = 0;
  operator ConstBytes() const { return {data, size}; }  // what may be written may be read
};

// A vector's elements as a comm buffer.
template <typename T>
ConstBytes bytes_of(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
template <typename T>
Bytes bytes_of(std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
// A host tensor's bytes as a comm buffer.
inline ConstBytes bytes_of(const Tensor& t) { return {t.raw(), t.nbytes()}; }
inline Bytes bytes_of(Tensor& t) { return {t.raw(), t.nbytes()}; }

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "thread", "nccl", "device-sim", "mpi"

  // recv[r·count + i] = send_of_rank_r[i]. Every rank must pass the same count (checked).
  void all_gather(ConstBytes send, Bytes recv, std::size_t count, DType dtype);
  // Variable sizes: counts[r] = what rank r sends (exchanged by the call); recv holds them in rank
  // order and must have room for the sum. Returns the counts.
  std::vector<std::size_t> all_gather_v(ConstBytes send, std::size_t count, Bytes recv,
                                        DType dtype);
  // In place.
  void all_reduce(Bytes buf, std::size_t count, DType dtype, ReduceOp op);
  // send has size()·count elements; rank r receives the reduction of every rank's block r.
  void reduce_scatter(ConstBytes send, Bytes recv, std::size_t count, DType dtype, ReduceOp op);
  // Block p of send (count elements) goes to rank p; recv block p comes from rank p.
  void all_to_all(ConstBytes send, Bytes recv, std::size_t count, DType dtype);
  // Point to point, matched by (peer, tag). Sizes must agree (checked).
  void send(ConstBytes buf, std::size_t count, DType dtype, int peer, int tag);
  void recv(Bytes buf, std::size_t count, DType dtype, int peer, int tag);
  // A paired exchange that cannot deadlock: send to `to` and receive from `from` at once.
  void send_recv(ConstBytes send_buf, std::size_t send_count, int to, Bytes recv_buf,
                 std::size_t recv_count, int from, DType dtype, int tag);
  void barrier() { do_barrier(); }

  // Bytes this rank has put on the wire so far (the cost model reads it).
  virtual std::uint64_t bytes_sent() const = 0;

 protected:
  // The calls above, once their buffers are known to hold what the counts say.
  virtual void do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  // recv_capacity: the elements recv has room for.
  virtual std::vector<std::size_t> do_all_gather_v(const void* send, std::size_t count, void* recv,
                                                   std::size_t recv_capacity, DType dtype) = 0;
  virtual void do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) = 0;
  virtual void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                 ReduceOp op) = 0;
  virtual void do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  virtual void do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) = 0;
  virtual void do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) = 0;
  virtual void do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                            std::size_t recv_count, int from, DType dtype, int tag) = 0;
  virtual void do_barrier() = 0;
};

// Throws unless a buffer of `buffer_bytes` bytes at `data` holds `blocks` × `count` elements of
// `dtype` (a size that overflows does not); `what` names the call and the buffer ("all_gather
// send"). Comm's calls use it, and so do wrappers that stage a buffer before a call (the GPU
// path's host staging), so that they read no more than the buffer holds either.
void check_comm_buffer(const Comm& comm, const char* what, const void* data,
                       std::size_t buffer_bytes, std::size_t blocks, std::size_t count,
                       DType dtype);

}  // namespace cplab
