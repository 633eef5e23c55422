#include "gpu/comm/device_sim_comm.hpp"

#include <exception>
#include <thread>

#include "comm/wire_bytes.hpp"
#include "core/error.hpp"
#include "gpu/comm/device_sim_group.hpp"
#include "gpu/comm/reduce_elem.hpp"
#include "gpu/kernels/reduce_elementwise.hpp"

namespace cplab::gpu {
namespace {

std::byte* at(void* p, std::size_t offset) { return static_cast<std::byte*>(p) + offset; }
const std::byte* at(const void* p, std::size_t offset) {
  return static_cast<const std::byte*>(p) + offset;
}

}  // namespace

// Whatever a call throws breaks the group: the other ranks are released at once, not at their
// timeout, and a later bootstrap does not reuse it.
template <typename Body>
auto DeviceSimComm::guarded(Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    group_->failed(rank_, std::current_exception(), e.what());
    throw;
  }
}

DeviceSimComm::DeviceSimComm(std::shared_ptr<detail::SimGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {
  CPLAB_CHECK(rank >= 0 && rank < group_->size, "device-sim rank {} outside [0, {})", rank,
              group_->size);
}

DeviceSimComm::~DeviceSimComm() = default;

int DeviceSimComm::size() const { return group_->size; }
int DeviceSimComm::device() const { return group_->device; }
bool DeviceSimComm::broken() const { return group_->aborted(); }

void* DeviceSimComm::scratch(std::size_t bytes) {
  if (scratch_.bytes() < bytes) scratch_ = DeviceBuffer(bytes);
  return scratch_.get();
}

// Every collective: the rank's own work finished (its send data is final), then the rendezvous,
// then each rank reads its peers' buffers into its scratch, a second rendezvous (nobody reads any
// more), and only then each rank writes its own output, so in-place calls are safe.
void DeviceSimComm::do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  guarded([&] {
    synchronize(stream());
    const auto peers = group_->arrive(
        rank_, {.op = "all_gather", .send = send, .recv = recv, .count = count, .dtype = dtype},
        true);
    const std::size_t bytes = count * dtype_size(dtype);
    void* out = scratch(bytes * static_cast<std::size_t>(size()));
    for (int p = 0; p < size(); ++p) copy_bytes(at(out, p * bytes), peers[p].send, bytes, stream());
    synchronize(stream());
    group_->rendezvous(rank_, "all_gather (completion)");
    copy_bytes(recv, scratch_.get(), bytes * static_cast<std::size_t>(size()), stream());
    synchronize(stream());
    bytes_sent_ +=
        sim::wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
  });
}

std::vector<std::size_t> DeviceSimComm::do_all_gather_v(const void* send, std::size_t count,
                                                        void* recv, std::size_t recv_capacity,
                                                        DType dtype) {
  return guarded([&] {
    synchronize(stream());
    const auto peers = group_->arrive(rank_,
                                      {.op = "all_gather_v",
                                       .send = send,
                                       .recv = recv,
                                       .count = count,
                                       .capacity = recv_capacity,
                                       .dtype = dtype},
                                      false);
    std::vector<std::size_t> counts;
    std::size_t total = 0;
    for (const auto& a : peers) {
      counts.push_back(a.count);
      total += a.count;
    }
    for (int r = 0; r < size(); ++r) {
      CPLAB_CHECK(peers[r].capacity >= total,
                  "device-sim all_gather_v: rank {} has room for {} elements, the ranks send {}", r,
                  peers[r].capacity, total);
    }
    const std::size_t es = dtype_size(dtype);
    void* out = scratch(total * es);
    std::size_t offset = 0;
    for (int p = 0; p < size(); ++p) {
      copy_bytes(at(out, offset * es), peers[p].send, counts[p] * es, stream());
      offset += counts[p];
    }
    synchronize(stream());
    group_->rendezvous(rank_, "all_gather_v (completion)");
    copy_bytes(recv, scratch_.get(), total * es, stream());
    synchronize(stream());
    bytes_sent_ += sim::wire_bytes::all_gather(count, es, static_cast<std::uint64_t>(size()));
    return counts;
  });
}

void DeviceSimComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  guarded([&] {
    const ReduceElem elem = reduce_elem(dtype, "all_reduce");
    synchronize(stream());
    const auto peers = group_->arrive(rank_,
                                      {.op = "all_reduce",
                                       .send = buf,
                                       .recv = buf,
                                       .count = count,
                                       .dtype = dtype,
                                       .reduce = op},
                                      true);
    const std::size_t bytes = count * dtype_size(dtype);
    void* acc = scratch(bytes);
    copy_bytes(acc, peers[0].send, bytes, stream());
    for (int p = 1; p < size(); ++p) {
      reduce_into(acc, peers[p].send, static_cast<std::int64_t>(count), elem, reduce_kind(op),
                  stream());
    }
    synchronize(stream());
    group_->rendezvous(rank_, "all_reduce (completion)");
    copy_bytes(buf, scratch_.get(), bytes, stream());
    synchronize(stream());
    bytes_sent_ +=
        sim::wire_bytes::all_reduce(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
  });
}

void DeviceSimComm::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                      ReduceOp op) {
  guarded([&] {
    const ReduceElem elem = reduce_elem(dtype, "reduce_scatter");
    synchronize(stream());
    const auto peers = group_->arrive(rank_,
                                      {.op = "reduce_scatter",
                                       .send = send,
                                       .recv = recv,
                                       .count = count,
                                       .dtype = dtype,
                                       .reduce = op},
                                      true);
    const std::size_t bytes = count * dtype_size(dtype);
    const std::size_t mine = bytes * static_cast<std::size_t>(rank_);
    void* acc = scratch(bytes);
    copy_bytes(acc, at(peers[0].send, mine), bytes, stream());
    for (int p = 1; p < size(); ++p) {
      reduce_into(acc, at(peers[p].send, mine), static_cast<std::int64_t>(count), elem,
                  reduce_kind(op), stream());
    }
    synchronize(stream());
    group_->rendezvous(rank_, "reduce_scatter (completion)");
    copy_bytes(recv, scratch_.get(), bytes, stream());
    synchronize(stream());
    bytes_sent_ += sim::wire_bytes::reduce_scatter(count, dtype_size(dtype),
                                                   static_cast<std::uint64_t>(size()));
  });
}

void DeviceSimComm::do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  guarded([&] {
    synchronize(stream());
    const auto peers = group_->arrive(
        rank_, {.op = "all_to_all", .send = send, .recv = recv, .count = count, .dtype = dtype},
        true);
    const std::size_t bytes = count * dtype_size(dtype);
    void* out = scratch(bytes * static_cast<std::size_t>(size()));
    for (int p = 0; p < size(); ++p) {
      copy_bytes(at(out, p * bytes), at(peers[p].send, bytes * static_cast<std::size_t>(rank_)),
                 bytes, stream());
    }
    synchronize(stream());
    group_->rendezvous(rank_, "all_to_all (completion)");
    copy_bytes(recv, scratch_.get(), bytes * static_cast<std::size_t>(size()), stream());
    synchronize(stream());
    bytes_sent_ +=
        sim::wire_bytes::all_to_all(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
  });
}

void DeviceSimComm::do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  guarded([&] {
    CPLAB_CHECK(peer >= 0 && peer < size(), "device-sim send: peer {} outside [0, {})", peer,
                size());
    synchronize(stream());
    const auto post = group_->post(rank_, peer, tag, buf, count, dtype);
    group_->wait_done(rank_, peer, tag, post);
    bytes_sent_ += sim::wire_bytes::send(count, dtype_size(dtype));
  });
}

void DeviceSimComm::do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  guarded([&] {
    CPLAB_CHECK(peer >= 0 && peer < size(), "device-sim recv: peer {} outside [0, {})", peer,
                size());
    const auto post = group_->take(peer, rank_, tag);
    if (post->count != count || post->dtype != dtype) {
      const std::string error =
          fmt::format("rank {} sends {} × {} to rank {} (tag {}), which expects {} × {}", peer,
                      post->count, dtype_name(post->dtype), rank_, tag, count, dtype_name(dtype));
      group_->finish(post, error);
      CPLAB_FAIL("device-sim recv: {}", error);
    }
    try {
      copy_bytes(buf, post->buf, count * dtype_size(dtype), stream());
      synchronize(stream());
    } catch (const std::exception& e) {
      group_->finish(post, e.what());
      throw;
    }
    group_->finish(post, {});
  });
}

void DeviceSimComm::do_send_recv(const void* send_buf, std::size_t send_count, int to,
                                 void* recv_buf, std::size_t recv_count, int from, DType dtype,
                                 int tag) {
  guarded([&] {
    CPLAB_CHECK(to >= 0 && to < size() && from >= 0 && from < size(),
                "device-sim send_recv: peers {} and {} outside [0, {})", to, from, size());
    synchronize(stream());
    // Posting first and waiting last is what makes a ring of send_recv calls deadlock-free.
    const auto post = group_->post(rank_, to, tag, send_buf, send_count, dtype);
    do_recv(recv_buf, recv_count, dtype, from, tag);
    group_->wait_done(rank_, to, tag, post);
    bytes_sent_ += sim::wire_bytes::send(send_count, dtype_size(dtype));
  });
}

void DeviceSimComm::do_barrier() {
  guarded([&] {
    synchronize(stream());
    // One round is enough: rounds are numbered per rank, so a rank that leaves first and starts
    // its next collective fills the next round, never this one's slots.
    group_->arrive(rank_, {.op = "barrier"}, true);
  });
}

DeviceSimWorld::DeviceSimWorld(int size, DeviceSimOptions options) {
  const int device = options.device >= 0 ? options.device : current_device();
  const int saved = current_device();
  set_device(device);
  group_ = std::make_shared<detail::SimGroup>(size, device, options.timeout);
  for (int r = 0; r < size; ++r) comms_.push_back(std::make_unique<DeviceSimComm>(group_, r));
  set_device(saved);
}

DeviceSimWorld::~DeviceSimWorld() = default;

int DeviceSimWorld::device() const { return group_->device; }

DeviceSimComm& DeviceSimWorld::comm(int rank) {
  CPLAB_CHECK(rank >= 0 && rank < size(), "device-sim rank {} outside [0, {})", rank, size());
  return *comms_[static_cast<std::size_t>(rank)];
}

void DeviceSimWorld::leave(int rank) { group_->returned(rank); }

void DeviceSimWorld::run(const std::function<void(DeviceSimComm&)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < size(); ++r) {
    threads.emplace_back([&, r] {
      ScopedRankTag tag(r, size());
      try {
        set_device(device());
        fn(*comms_[static_cast<std::size_t>(r)]);
        group_->returned(r);  // the others stop waiting for it at once
      } catch (const std::exception& e) {
        group_->failed(r, std::current_exception(), e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  // The failure that came first; later ones are mostly its echoes.
  if (std::exception_ptr first = group_->first_failure()) std::rethrow_exception(first);
}

}  // namespace cplab::gpu
