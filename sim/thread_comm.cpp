#include "sim/thread_comm.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <system_error>
#include <thread>

#include "reference/types/error.hpp"
#include "sim/thread_group.hpp"
#include "sim/wire_bytes.hpp"

namespace cplab::sim {
namespace {

using detail::Contribution;
using Parts = std::vector<Contribution>;

std::string sizes_of(const Parts& parts) {
  std::vector<std::string> listed;
  for (std::size_t r = 0; r < parts.size(); ++r) {
    listed.push_back(
        fmt::format("rank {}: {} x {}", r, parts[r].count, dtype_name(parts[r].dtype)));
  }
  return fmt::format("{}", fmt::join(listed, ", "));
}

// Collectives with equal sizes: every rank must pass the same count and dtype.
void check_equal_sizes(const char* call, std::int64_t seq, const Parts& parts) {
  for (const Contribution& part : parts) {
    CPLAB_CHECK(part.count == parts[0].count && part.dtype == parts[0].dtype,
                "{} #{}: sizes disagree: {}", call, seq, sizes_of(parts));
  }
}

template <typename T>
T combine(T a, T b, ReduceOp op) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == ReduceOp::sum ? (a || b) : (a || b);
  } else if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    const float x = static_cast<float>(a), y = static_cast<float>(b);
    return T(op == ReduceOp::sum ? x + y : std::max(x, y));
  } else {
    return op == ReduceOp::sum ? static_cast<T>(a + b) : std::max(a, b);
  }
}

// out[i] = op over ranks (in rank order) of block `block` of every part.
void reduce_block(const Parts& parts, std::size_t block, std::size_t count, ReduceOp op,
                  void* out) {
  visit_dtype(parts[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* result = static_cast<T*>(out);
    for (std::size_t i = 0; i < count; ++i) {
      T acc = reinterpret_cast<const T*>(parts[0].data.data())[block * count + i];
      for (std::size_t r = 1; r < parts.size(); ++r) {
        acc = combine(acc, reinterpret_cast<const T*>(parts[r].data.data())[block * count + i], op);
      }
      result[i] = acc;
    }
  });
}

}  // namespace

World::World(int size, WorldOptions options) : size_(size), options_(std::move(options)) {
  CPLAB_CHECK(size >= 1, "a World needs at least one rank, got {}", size);
}

namespace {

// Starts rank r's thread; when the system refuses it, fails the group at once (the ranks already
// running are released, not left to their collective timeout) and returns false.
template <typename Body>
bool start_rank_thread(std::vector<std::jthread>& threads, int r, int size,
                       detail::ThreadGroup& group, Body body) {
  try {
    threads.emplace_back(std::move(body));
    return true;
  } catch (const std::system_error& e) {
    const std::string message =
        fmt::format("rank {}/{}: the system refused a thread for it: {}", r, size, e.what());
    group.failed(r, std::make_exception_ptr(ResourceError(message)), message);
    return false;
  }
}

}  // namespace

void World::run(const std::function<void(RankContext&)>& fn) {
  detail::ThreadGroup group(size_, options_);
  std::vector<std::unique_ptr<ThreadComm>> comms;
  for (int r = 0; r < size_; ++r) comms.push_back(std::make_unique<ThreadComm>(r, group));
  {
    std::vector<std::jthread> threads;  // joined when the scope ends, whatever happens
    for (int r = 0; r < size_; ++r) {
      if (!start_rank_thread(threads, r, size_, group, [&, r] {
            ScopedRankTag tag(r, size_);
            try {
              RankContext ctx{r, size_, *comms[r]};
              fn(ctx);
              group.returned(r);
            } catch (const Error& e) {
              group.failed(r, std::current_exception(), e.what());
            } catch (const std::bad_alloc&) {
              // Out of memory is the machine's limit, not a wrong answer of the rank: keep its
              // kind.
              const std::string message = fmt::format("rank {}/{}: out of memory", r, size_);
              group.failed(r, std::make_exception_ptr(ResourceError(message)), message);
            } catch (const std::exception& e) {
              const std::string message = fmt::format("rank {}/{}: {}", r, size_, e.what());
              group.failed(r, std::make_exception_ptr(Error(message)), message);
            } catch (...) {
              const std::string message = fmt::format("rank {}/{}: unknown exception", r, size_);
              group.failed(r, std::make_exception_ptr(Error(message)), message);
            }
          }))
        break;
    }
  }
  bytes_sent_.clear();
  for (const auto& comm : comms) bytes_sent_.push_back(comm->bytes_sent());
  faults_fired_ = group.faults_fired();
  if (std::exception_ptr failure = group.first_failure()) std::rethrow_exception(failure);
}

ThreadComm::ThreadComm(int rank, detail::ThreadGroup& group) : rank_(rank), group_(group) {}

int ThreadComm::size() const { return group_.size(); }

void ThreadComm::check_peer(int peer, const char* what) const {
  CPLAB_CHECK(peer >= 0 && peer < size(), "{}: peer rank {} out of range [0, {})", what, peer,
              size());
}

namespace {

// Looks up the fault for this call and applies it; false when the contribution is dropped.
bool contribute(detail::ThreadGroup& group, int rank, const std::string& call, Contribution& part) {
  const Fault* fault = group.fault_for(rank, call);
  if (fault == nullptr) return true;
  if (fault->kind == Fault::Kind::drop) return false;
  group.apply(rank, *fault, part);
  return true;
}

}  // namespace

void ThreadComm::all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  Contribution mine = Contribution::copy_of(send, count, dtype);
  if (!contribute(group_, rank_, "all_gather", mine)) return group_.skip(rank_, "all_gather");
  group_.join(rank_, "all_gather", std::move(mine), [&](std::int64_t seq, const Parts& parts) {
    check_equal_sizes("all_gather", seq, parts);
    auto* out = static_cast<std::byte*>(recv);
    for (const Contribution& part : parts) {
      if (!part.data.empty()) std::memcpy(out, part.data.data(), part.data.size());
      out += part.data.size();
    }
  });
  bytes_sent_ +=
      wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

std::vector<std::size_t> ThreadComm::all_gather_v(const void* send, std::size_t count, void* recv,
                                                  std::size_t recv_capacity, DType dtype) {
  Contribution mine = Contribution::copy_of(send, count, dtype);
  std::vector<std::size_t> counts;
  if (!contribute(group_, rank_, "all_gather_v", mine)) {
    group_.skip(rank_, "all_gather_v");
    return counts;
  }
  group_.join(rank_, "all_gather_v", std::move(mine), [&](std::int64_t seq, const Parts& parts) {
    std::size_t total = 0;
    for (const Contribution& part : parts) {
      CPLAB_CHECK(part.dtype == dtype, "all_gather_v #{}: dtypes disagree: {}", seq,
                  sizes_of(parts));
      counts.push_back(part.count);
      total += part.count;
    }
    CPLAB_CHECK(total <= recv_capacity, "all_gather_v #{}: {} elements arrive ({}), room for {}",
                seq, total, sizes_of(parts), recv_capacity);
    auto* out = static_cast<std::byte*>(recv);
    for (const Contribution& part : parts) {
      if (!part.data.empty()) std::memcpy(out, part.data.data(), part.data.size());
      out += part.data.size();
    }
  });
  bytes_sent_ +=
      wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
  return counts;
}

void ThreadComm::all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  Contribution mine = Contribution::copy_of(buf, count, dtype);
  if (!contribute(group_, rank_, "all_reduce", mine)) return group_.skip(rank_, "all_reduce");
  group_.join(rank_, "all_reduce", std::move(mine), [&](std::int64_t seq, const Parts& parts) {
    check_equal_sizes("all_reduce", seq, parts);
    reduce_block(parts, 0, count, op, buf);
  });
  bytes_sent_ +=
      wire_bytes::all_reduce(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                ReduceOp op) {
  Contribution mine = Contribution::copy_of(send, count * static_cast<std::size_t>(size()), dtype);
  if (!contribute(group_, rank_, "reduce_scatter", mine))
    return group_.skip(rank_, "reduce_scatter");
  group_.join(rank_, "reduce_scatter", std::move(mine), [&](std::int64_t seq, const Parts& parts) {
    check_equal_sizes("reduce_scatter", seq, parts);
    reduce_block(parts, static_cast<std::size_t>(rank_), count, op, recv);
  });
  bytes_sent_ +=
      wire_bytes::reduce_scatter(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  Contribution mine = Contribution::copy_of(send, count * static_cast<std::size_t>(size()), dtype);
  if (!contribute(group_, rank_, "all_to_all", mine)) return group_.skip(rank_, "all_to_all");
  group_.join(rank_, "all_to_all", std::move(mine), [&](std::int64_t seq, const Parts& parts) {
    check_equal_sizes("all_to_all", seq, parts);
    const std::size_t block = count * dtype_size(dtype);
    auto* out = static_cast<std::byte*>(recv);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (block)
        std::memcpy(out + p * block, parts[p].data.data() + static_cast<std::size_t>(rank_) * block,
                    block);
    }
  });
  bytes_sent_ +=
      wire_bytes::all_to_all(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "send");
  Contribution message = Contribution::copy_of(buf, count, dtype);
  bytes_sent_ += wire_bytes::send(count, dtype_size(dtype));
  if (!contribute(group_, rank_, "send", message)) return;  // lost on the way
  group_.post(rank_, peer, tag, std::move(message));
}

void ThreadComm::recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "recv");
  Contribution message = group_.take(rank_, peer, tag);
  CPLAB_CHECK(message.count == count && message.dtype == dtype,
              "recv from rank {} (tag {}): expected {} x {}, rank {} sent {} x {}", peer, tag,
              count, dtype_name(dtype), peer, message.count, dtype_name(message.dtype));
  if (!message.data.empty()) std::memcpy(buf, message.data.data(), message.data.size());
}

void ThreadComm::send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                           std::size_t recv_count, int from, DType dtype, int tag) {
  // Sends are buffered, so posting first and then waiting cannot deadlock.
  send(send_buf, send_count, dtype, to, tag);
  recv(recv_buf, recv_count, dtype, from, tag);
}

void ThreadComm::barrier() {
  Contribution none;
  if (!contribute(group_, rank_, "barrier", none)) return group_.skip(rank_, "barrier");
  group_.join(rank_, "barrier", std::move(none), [](std::int64_t, const Parts&) {});
}

}  // namespace cplab::sim
