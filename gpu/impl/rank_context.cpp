#include "gpu/impl/rank_context.hpp"

#include <map>
#include <memory>
#include <vector>

#include "comm/rank_threads.hpp"
#include "core/error.hpp"
#include "gpu/comm/bootstrap.hpp"

namespace cplab::gpu {
namespace {

// A host comm's rank thread keeps one stream per device it worked on.
Stream thread_stream(int device) {
  thread_local std::map<int, std::unique_ptr<StreamOwner>> streams;
  // A host group's rank threads are reused from run to run: the streams end with the rank.
  if (streams.empty()) sim::at_rank_end([] { streams.clear(); });
  auto& owner = streams[device];
  if (!owner) owner = std::make_unique<StreamOwner>();
  return owner->get();
}

// A new rank thread starts on device 0, and a reused one must too: device_comm_for builds a
// device-sim world on rank 0's current device, which a host-comm run left at rank mod devices.
void start_next_rank_on_device_zero() {
  thread_local bool registered = false;
  if (registered) return;
  registered = true;
  sim::at_rank_end([] {
    registered = false;
    set_device(0);
  });
}

std::vector<std::byte> to_host(const void* device, std::size_t bytes, Stream stream) {
  std::vector<std::byte> host(bytes);
  copy_bytes(host.data(), device, bytes, stream);
  synchronize(stream);
  return host;
}

}  // namespace

RankContext::RankContext(Comm& comm, GpuCommKind kind) : comm_(&comm) {
  const int devices = device_count();
  CPLAB_CHECK(devices > 0, "gpu: {}", device_unavailable_reason());
  start_next_rank_on_device_zero();
  auto* device_comm = dynamic_cast<DeviceComm*>(&comm);
  if (device_comm == nullptr && kind != GpuCommKind::host)
    device_comm = &device_comm_for(comm, kind);
  if (device_comm != nullptr) {
    comm_ = device_comm;
    device_memory_ = true;
    set_device(device_comm->device());
    stream_ = device_comm->stream();
  } else {
    device_memory_ = false;
    const int device = comm.rank() % devices;
    set_device(device);
    stream_ = thread_stream(device);
  }
}

namespace {

ConstBytes device_bytes(const DeviceBuffer& b) { return {b.get(), b.bytes()}; }
Bytes device_bytes(DeviceBuffer& b) { return {b.get(), b.bytes()}; }

}  // namespace

void RankContext::all_gather(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count,
                             DType dtype) {
  const auto ranks = static_cast<std::size_t>(size());
  check_comm_buffer(*comm_, "gpu all_gather send", send.get(), send.bytes(), 1, count, dtype);
  check_comm_buffer(*comm_, "gpu all_gather recv", recv.get(), recv.bytes(), ranks, count, dtype);
  if (device_memory_)
    return comm_->all_gather(device_bytes(send), device_bytes(recv), count, dtype);
  const std::size_t es = dtype_size(dtype);
  const auto mine = to_host(send.get(), count * es, stream_);
  std::vector<std::byte> all(count * es * ranks);
  comm_->all_gather(bytes_of(mine), bytes_of(all), count, dtype);
  copy_bytes(recv.get(), all.data(), all.size(), stream_);
  synchronize(stream_);
}

void RankContext::all_reduce(DeviceBuffer& buf, std::size_t count, DType dtype, ReduceOp op) {
  check_comm_buffer(*comm_, "gpu all_reduce buffer", buf.get(), buf.bytes(), 1, count, dtype);
  if (device_memory_) return comm_->all_reduce(device_bytes(buf), count, dtype, op);
  auto host = to_host(buf.get(), count * dtype_size(dtype), stream_);
  comm_->all_reduce(bytes_of(host), count, dtype, op);
  copy_bytes(buf.get(), host.data(), host.size(), stream_);
  synchronize(stream_);
}

void RankContext::reduce_scatter(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count,
                                 DType dtype, ReduceOp op) {
  const auto ranks = static_cast<std::size_t>(size());
  check_comm_buffer(*comm_, "gpu reduce_scatter send", send.get(), send.bytes(), ranks, count,
                    dtype);
  check_comm_buffer(*comm_, "gpu reduce_scatter recv", recv.get(), recv.bytes(), 1, count, dtype);
  if (device_memory_)
    return comm_->reduce_scatter(device_bytes(send), device_bytes(recv), count, dtype, op);
  const std::size_t bytes = count * dtype_size(dtype);
  const auto all = to_host(send.get(), bytes * ranks, stream_);
  std::vector<std::byte> mine(bytes);
  comm_->reduce_scatter(bytes_of(all), bytes_of(mine), count, dtype, op);
  copy_bytes(recv.get(), mine.data(), bytes, stream_);
  synchronize(stream_);
}

void RankContext::all_to_all(const DeviceBuffer& send, DeviceBuffer& recv, std::size_t count,
                             DType dtype) {
  const auto ranks = static_cast<std::size_t>(size());
  check_comm_buffer(*comm_, "gpu all_to_all send", send.get(), send.bytes(), ranks, count, dtype);
  check_comm_buffer(*comm_, "gpu all_to_all recv", recv.get(), recv.bytes(), ranks, count, dtype);
  if (device_memory_)
    return comm_->all_to_all(device_bytes(send), device_bytes(recv), count, dtype);
  const std::size_t bytes = count * dtype_size(dtype) * ranks;
  const auto out = to_host(send.get(), bytes, stream_);
  std::vector<std::byte> in(bytes);
  comm_->all_to_all(bytes_of(out), bytes_of(in), count, dtype);
  copy_bytes(recv.get(), in.data(), bytes, stream_);
  synchronize(stream_);
}

void RankContext::send_recv(const DeviceBuffer& send, int to, DeviceBuffer& recv, int from,
                            std::size_t count, DType dtype, int tag) {
  check_comm_buffer(*comm_, "gpu send_recv send", send.get(), send.bytes(), 1, count, dtype);
  check_comm_buffer(*comm_, "gpu send_recv recv", recv.get(), recv.bytes(), 1, count, dtype);
  if (device_memory_)
    return comm_->send_recv(device_bytes(send), count, to, device_bytes(recv), count, from, dtype,
                            tag);
  const auto out = to_host(send.get(), count * dtype_size(dtype), stream_);
  std::vector<std::byte> in(out.size());
  comm_->send_recv(bytes_of(out), count, to, bytes_of(in), count, from, dtype, tag);
  copy_bytes(recv.get(), in.data(), in.size(), stream_);
  synchronize(stream_);
}

}  // namespace cplab::gpu
