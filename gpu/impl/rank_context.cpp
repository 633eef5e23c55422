#include "gpu/impl/rank_context.hpp"

#include <map>
#include <memory>
#include <vector>

#include "gpu/comm/bootstrap.hpp"
#include "reference/types/error.hpp"
#include "sim/rank_threads.hpp"

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

void RankContext::all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  if (device_memory_) return comm_->all_gather(send, recv, count, dtype);
  const std::size_t es = dtype_size(dtype);
  const auto mine = to_host(send, count * es, stream_);
  std::vector<std::byte> all(count * es * static_cast<std::size_t>(size()));
  comm_->all_gather(mine.data(), all.data(), count, dtype);
  copy_bytes(recv, all.data(), all.size(), stream_);
  synchronize(stream_);
}

void RankContext::all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  if (device_memory_) return comm_->all_reduce(buf, count, dtype, op);
  auto host = to_host(buf, count * dtype_size(dtype), stream_);
  comm_->all_reduce(host.data(), count, dtype, op);
  copy_bytes(buf, host.data(), host.size(), stream_);
  synchronize(stream_);
}

void RankContext::reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                 ReduceOp op) {
  if (device_memory_) return comm_->reduce_scatter(send, recv, count, dtype, op);
  const std::size_t bytes = count * dtype_size(dtype);
  const auto all = to_host(send, bytes * static_cast<std::size_t>(size()), stream_);
  std::vector<std::byte> mine(bytes);
  comm_->reduce_scatter(all.data(), mine.data(), count, dtype, op);
  copy_bytes(recv, mine.data(), bytes, stream_);
  synchronize(stream_);
}

void RankContext::all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  if (device_memory_) return comm_->all_to_all(send, recv, count, dtype);
  const std::size_t bytes = count * dtype_size(dtype) * static_cast<std::size_t>(size());
  const auto out = to_host(send, bytes, stream_);
  std::vector<std::byte> in(bytes);
  comm_->all_to_all(out.data(), in.data(), count, dtype);
  copy_bytes(recv, in.data(), bytes, stream_);
  synchronize(stream_);
}

}  // namespace cplab::gpu
