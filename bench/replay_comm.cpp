#include "bench/replay_comm.hpp"

#include <cstring>

#include "core/error.hpp"

namespace cplab::bench {

void RecordingComm::keep(const char* call, const void* data, std::size_t bytes) {
  const auto* first = static_cast<const std::byte*>(data);
  deliveries_.push_back({call, std::vector<std::byte>(first, first + bytes)});
}

void RecordingComm::do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  // The buffers were checked by this comm's call: they hold exactly what the counts say.
  const std::size_t bytes = count * dtype_size(dtype);
  const std::size_t all = bytes * static_cast<std::size_t>(size());
  inner_.all_gather({send, bytes}, {recv, all}, count, dtype);
  keep("all_gather", recv, all);
}

std::vector<std::size_t> RecordingComm::do_all_gather_v(const void* send, std::size_t count,
                                                        void* recv, std::size_t recv_capacity,
                                                        DType dtype) {
  std::vector<std::size_t> counts = inner_.all_gather_v(
      {send, count * dtype_size(dtype)}, count, {recv, recv_capacity * dtype_size(dtype)}, dtype);
  keep("all_gather_v counts", counts.data(), counts.size() * sizeof(std::size_t));
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  keep("all_gather_v", recv, total * dtype_size(dtype));
  return counts;
}

void RecordingComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  inner_.all_reduce({buf, count * dtype_size(dtype)}, count, dtype, op);
  keep("all_reduce", buf, count * dtype_size(dtype));
}

void RecordingComm::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                      ReduceOp op) {
  const std::size_t bytes = count * dtype_size(dtype);
  inner_.reduce_scatter({send, bytes * static_cast<std::size_t>(size())}, {recv, bytes}, count,
                        dtype, op);
  keep("reduce_scatter", recv, bytes);
}

void RecordingComm::do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  const std::size_t all = count * dtype_size(dtype) * static_cast<std::size_t>(size());
  inner_.all_to_all({send, all}, {recv, all}, count, dtype);
  keep("all_to_all", recv, all);
}

void RecordingComm::do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  inner_.send({buf, count * dtype_size(dtype)}, count, dtype, peer, tag);
}

void RecordingComm::do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  inner_.recv({buf, count * dtype_size(dtype)}, count, dtype, peer, tag);
  keep("recv", buf, count * dtype_size(dtype));
}

void RecordingComm::do_send_recv(const void* send_buf, std::size_t send_count, int to,
                                 void* recv_buf, std::size_t recv_count, int from, DType dtype,
                                 int tag) {
  inner_.send_recv({send_buf, send_count * dtype_size(dtype)}, send_count, to,
                   {recv_buf, recv_count * dtype_size(dtype)}, recv_count, from, dtype, tag);
  keep("send_recv", recv_buf, recv_count * dtype_size(dtype));
}

void RecordingComm::do_barrier() { inner_.barrier(); }

void ReplayComm::deliver(const char* call, void* data, std::size_t bytes) {
  CPLAB_CHECK(!deliveries_.empty(), "replay: {} called, nothing was recorded", call);
  const Delivery& d = deliveries_[next_];
  CPLAB_CHECK(d.call == call && d.bytes.size() == bytes,
              "replay: call {} is {} of {} bytes, the recording has {} of {} bytes", next_, call,
              bytes, d.call, d.bytes.size());
  if (bytes > 0) std::memcpy(data, d.bytes.data(), bytes);
  next_ = (next_ + 1) % deliveries_.size();
}

void ReplayComm::do_all_gather(const void*, void* recv, std::size_t count, DType dtype) {
  deliver("all_gather", recv, count * dtype_size(dtype) * static_cast<std::size_t>(size_));
}

std::vector<std::size_t> ReplayComm::do_all_gather_v(const void*, std::size_t, void* recv,
                                                     std::size_t recv_capacity, DType dtype) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(size_));
  deliver("all_gather_v counts", counts.data(), counts.size() * sizeof(std::size_t));
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  CPLAB_CHECK(total <= recv_capacity, "replay: all_gather_v of {} into room for {}", total,
              recv_capacity);
  deliver("all_gather_v", recv, total * dtype_size(dtype));
  return counts;
}

void ReplayComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp) {
  deliver("all_reduce", buf, count * dtype_size(dtype));
}

void ReplayComm::do_reduce_scatter(const void*, void* recv, std::size_t count, DType dtype,
                                   ReduceOp) {
  deliver("reduce_scatter", recv, count * dtype_size(dtype));
}

void ReplayComm::do_all_to_all(const void*, void* recv, std::size_t count, DType dtype) {
  deliver("all_to_all", recv, count * dtype_size(dtype) * static_cast<std::size_t>(size_));
}

void ReplayComm::do_send(const void*, std::size_t, DType, int, int) {}

void ReplayComm::do_recv(void* buf, std::size_t count, DType dtype, int, int) {
  deliver("recv", buf, count * dtype_size(dtype));
}

void ReplayComm::do_send_recv(const void*, std::size_t, int, void* recv_buf, std::size_t recv_count,
                              int, DType dtype, int) {
  deliver("send_recv", recv_buf, recv_count * dtype_size(dtype));
}

void ReplayComm::do_barrier() {}

}  // namespace cplab::bench
