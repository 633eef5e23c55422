#include "comm/comm.hpp"

#include <limits>

#include "core/error.hpp"

namespace cplab {

void check_comm_buffer(const Comm& comm, const char* what, const void* data,
                       std::size_t buffer_bytes, std::size_t blocks, std::size_t count,
                       DType dtype) {
  const std::size_t elem = dtype_size(dtype);
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  // blocks · count · elem, refused (never wrapped) when it does not fit a size_t.
  const bool fits = count == 0 || blocks == 0 || (count <= kMax / elem / blocks);
  const std::size_t needed = fits ? blocks * count * elem : kMax;
  if (fits && needed <= buffer_bytes && (needed == 0 || data != nullptr)) return;
  // The rank prefix comes with the error on a rank's thread; elsewhere the message says it.
  const RankTag& tag = current_rank_tag();
  const std::string who =
      tag.rank == comm.rank() ? std::string() : fmt::format(" on rank {}", comm.rank());
  const std::string elements =
      blocks == 1 ? fmt::format("{} x {}", count, dtype_name(dtype))
                  : fmt::format("{} blocks of {} x {}", blocks, count, dtype_name(dtype));
  if (needed != 0 && data == nullptr) {
    CPLAB_FAIL("{} ({} comm{}): {} from a null buffer", what, comm.name(), who, elements);
  }
  CPLAB_FAIL("{} ({} comm{}): {} ({}) do not fit its buffer of {} bytes", what, comm.name(), who,
             elements, fits ? fmt::format("{} bytes", needed) : std::string("past size_t"),
             buffer_bytes);
}

void Comm::all_gather(ConstBytes send, Bytes recv, std::size_t count, DType dtype) {
  check_comm_buffer(*this, "all_gather send", send.data, send.size, 1, count, dtype);
  check_comm_buffer(*this, "all_gather recv", recv.data, recv.size,
                    static_cast<std::size_t>(size()), count, dtype);
  do_all_gather(send.data, recv.data, count, dtype);
}

std::vector<std::size_t> Comm::all_gather_v(ConstBytes send, std::size_t count, Bytes recv,
                                            DType dtype) {
  check_comm_buffer(*this, "all_gather_v send", send.data, send.size, 1, count, dtype);
  // What arrives is checked against this room by the call, once every count is known.
  return do_all_gather_v(send.data, count, recv.data, recv.size / dtype_size(dtype), dtype);
}

void Comm::all_reduce(Bytes buf, std::size_t count, DType dtype, ReduceOp op) {
  check_comm_buffer(*this, "all_reduce buffer", buf.data, buf.size, 1, count, dtype);
  do_all_reduce(buf.data, count, dtype, op);
}

void Comm::reduce_scatter(ConstBytes send, Bytes recv, std::size_t count, DType dtype,
                          ReduceOp op) {
  check_comm_buffer(*this, "reduce_scatter send", send.data, send.size,
                    static_cast<std::size_t>(size()), count, dtype);
  check_comm_buffer(*this, "reduce_scatter recv", recv.data, recv.size, 1, count, dtype);
  do_reduce_scatter(send.data, recv.data, count, dtype, op);
}

void Comm::all_to_all(ConstBytes send, Bytes recv, std::size_t count, DType dtype) {
  const auto blocks = static_cast<std::size_t>(size());
  check_comm_buffer(*this, "all_to_all send", send.data, send.size, blocks, count, dtype);
  check_comm_buffer(*this, "all_to_all recv", recv.data, recv.size, blocks, count, dtype);
  do_all_to_all(send.data, recv.data, count, dtype);
}

void Comm::send(ConstBytes buf, std::size_t count, DType dtype, int peer, int tag) {
  check_comm_buffer(*this, "send", buf.data, buf.size, 1, count, dtype);
  do_send(buf.data, count, dtype, peer, tag);
}

void Comm::recv(Bytes buf, std::size_t count, DType dtype, int peer, int tag) {
  check_comm_buffer(*this, "recv", buf.data, buf.size, 1, count, dtype);
  do_recv(buf.data, count, dtype, peer, tag);
}

void Comm::send_recv(ConstBytes send_buf, std::size_t send_count, int to, Bytes recv_buf,
                     std::size_t recv_count, int from, DType dtype, int tag) {
  check_comm_buffer(*this, "send_recv send", send_buf.data, send_buf.size, 1, send_count, dtype);
  check_comm_buffer(*this, "send_recv recv", recv_buf.data, recv_buf.size, 1, recv_count, dtype);
  do_send_recv(send_buf.data, send_count, to, recv_buf.data, recv_count, from, dtype, tag);
}

}  // namespace cplab
