#include "comm/thread_comm.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <system_error>

#include "comm/rank_fibers.hpp"
#include "comm/rank_threads.hpp"
#include "comm/thread_group.hpp"
#include "comm/wire_bytes.hpp"
#include "core/error.hpp"

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

// out[i] = op over ranks (in rank order) of block `block` of every part. A tile at a time, rank
// after rank (the loops vectorize), into a tile of its own: `out` may be one of the parts.
void reduce_block(const Parts& parts, std::size_t block, std::size_t count, ReduceOp op,
                  void* out) {
  visit_dtype(parts[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr std::size_t kTile = 1024;
    T acc[kTile];
    T* result = static_cast<T*>(out);
    for (std::size_t start = 0; start < count; start += kTile) {
      const std::size_t n = std::min(kTile, count - start);
      const std::size_t at = block * count + start;
      const T* first = reinterpret_cast<const T*>(parts[0].bytes()) + at;
      std::copy(first, first + n, acc);
      for (std::size_t r = 1; r < parts.size(); ++r) {
        const T* next = reinterpret_cast<const T*>(parts[r].bytes()) + at;
        for (std::size_t i = 0; i < n; ++i) acc[i] = combine(acc[i], next[i], op);
      }
      std::copy(acc, acc + n, result + start);
    }
  });
}

// Copies that may be in place (a rank's own block already where it belongs).
void copy_block(std::byte* to, const std::byte* from, std::size_t bytes) {
  if (bytes != 0 && to != from) std::memcpy(to, from, bytes);
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes != 0 && b_bytes != 0 && x < y + b_bytes && y < x + a_bytes;
}

// Parts of at least this many bytes are lent (read in place by the others) instead of copied:
// below it the copy costs less than the wait for the other ranks' reads that lending adds.
constexpr std::size_t kLendBytes = 64 * 1024;

// This rank's part of a call, with the fault planned for it applied: dropped, a corrupted or
// reordered copy, or late; else lent when `may_lend` and large.
struct Outgoing {
  detail::Contribution part;
  bool dropped = false;
  bool lent = false;
};
Outgoing outgoing(detail::ThreadGroup& group, int rank, const std::string& call, const void* data,
                  std::size_t count, DType dtype, bool may_lend) {
  Outgoing out;
  const Fault* fault = group.fault_for(rank, call);
  if (fault != nullptr && fault->kind == Fault::Kind::drop) {
    out.dropped = true;
    return out;
  }
  const bool alters = fault != nullptr && fault->kind != Fault::Kind::delay;
  out.lent = may_lend && !alters && count * dtype_size(dtype) >= kLendBytes;
  out.part = out.lent ? Contribution::lent_from(data, count, dtype)
                      : Contribution::copy_of(data, count, dtype);
  if (fault != nullptr) group.apply(rank, *fault, out.part);
  return out;
}

}  // namespace

World::World(int size, WorldOptions options) : size_(size), options_(std::move(options)) {
  CPLAB_CHECK(size >= 1, "a World needs at least one rank, got {}", size);
}

void World::run(const std::function<void(RankContext&)>& fn) {
  std::optional<detail::RankFibers> fibers;
  if (options_.ranks_as_fibers && fibers_supported()) {
    try {
      fibers.emplace(size_);
    } catch (const std::bad_alloc&) {
      throw ResourceError(fmt::format("no memory for the stacks of {} rank fibers", size_));
    }
  }
  detail::ThreadGroup group(size_, options_, fibers ? &*fibers : nullptr);
  std::vector<std::unique_ptr<ThreadComm>> comms;
  for (int r = 0; r < size_; ++r) comms.push_back(std::make_unique<ThreadComm>(r, group));
  const auto rank_body = [&](int r) {
    ScopedRankTag tag(r, size_);
    try {
      RankContext ctx{r, size_, *comms[r]};
      fn(ctx);
      group.returned(r);
    } catch (const Error& e) {
      group.failed(r, std::current_exception(), e.what());
    } catch (const std::bad_alloc&) {
      // Out of memory is the machine's limit, not a wrong answer of the rank: keep its kind.
      const std::string message = fmt::format("rank {}/{}: out of memory", r, size_);
      group.failed(r, std::make_exception_ptr(ResourceError(message)), message);
    } catch (const std::exception& e) {
      const std::string message = fmt::format("rank {}/{}: {}", r, size_, e.what());
      group.failed(r, std::make_exception_ptr(Error(message)), message);
    } catch (...) {
      const std::string message = fmt::format("rank {}/{}: unknown exception", r, size_);
      group.failed(r, std::make_exception_ptr(Error(message)), message);
    }
  };
  // When the system refuses a thread for rank r, the group fails at once (the ranks already
  // running are released, not left to their collective timeout).
  const auto refused = [&](int r, const std::system_error& e) {
    const std::string message =
        fmt::format("rank {}/{}: the system refused a thread for it: {}", r, size_, e.what());
    group.failed(r, std::make_exception_ptr(ResourceError(message)), message);
  };
  if (fibers) {
    fibers->run(rank_body);
  } else {
    detail::run_on_rank_threads(size_, rank_body, refused);
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

void ThreadComm::do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  // Lent unless the send buffer overlaps the receive buffer other than in place (at this rank's
  // block): this rank writes the receive buffer while the others read its part.
  const std::size_t block = count * dtype_size(dtype);
  auto* out = static_cast<std::byte*>(recv);
  const bool in_place = send == out + static_cast<std::size_t>(rank_) * block;
  const bool may_lend =
      in_place || !overlap(send, block, recv, block * static_cast<std::size_t>(size()));
  Outgoing mine = outgoing(group_, rank_, "all_gather", send, count, dtype, may_lend);
  if (mine.dropped) return group_.skip(rank_, "all_gather");
  group_.join(
      rank_, "all_gather", std::move(mine.part),
      [&](std::int64_t seq, const Parts& parts) {
        check_equal_sizes("all_gather", seq, parts);
        for (std::size_t p = 0; p < parts.size(); ++p)
          copy_block(out + p * block, parts[p].bytes(), block);
      },
      mine.lent);
  bytes_sent_ +=
      wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

std::vector<std::size_t> ThreadComm::do_all_gather_v(const void* send, std::size_t count,
                                                     void* recv, std::size_t recv_capacity,
                                                     DType dtype) {
  const std::size_t elem = dtype_size(dtype);
  const bool may_lend = !overlap(send, count * elem, recv, recv_capacity * elem);
  Outgoing mine = outgoing(group_, rank_, "all_gather_v", send, count, dtype, may_lend);
  std::vector<std::size_t> counts;
  if (mine.dropped) {
    group_.skip(rank_, "all_gather_v");
    return counts;
  }
  group_.join(
      rank_, "all_gather_v", std::move(mine.part),
      [&](std::int64_t seq, const Parts& parts) {
        std::size_t total = 0;
        for (const Contribution& part : parts) {
          CPLAB_CHECK(part.dtype == dtype, "all_gather_v #{}: dtypes disagree: {}", seq,
                      sizes_of(parts));
          counts.push_back(part.count);
          total += part.count;
        }
        CPLAB_CHECK(total <= recv_capacity,
                    "all_gather_v #{}: {} elements arrive ({}), room for {}", seq, total,
                    sizes_of(parts), recv_capacity);
        auto* out = static_cast<std::byte*>(recv);
        for (const Contribution& part : parts) {
          copy_block(out, part.bytes(), part.size_bytes());
          out += part.size_bytes();
        }
      },
      mine.lent);
  bytes_sent_ +=
      wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
  return counts;
}

void ThreadComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  // Always a copy: every rank writes its buffer while the others read theirs.
  Outgoing mine = outgoing(group_, rank_, "all_reduce", buf, count, dtype, false);
  if (mine.dropped) return group_.skip(rank_, "all_reduce");
  group_.join(rank_, "all_reduce", std::move(mine.part), [&](std::int64_t seq, const Parts& parts) {
    check_equal_sizes("all_reduce", seq, parts);
    reduce_block(parts, 0, count, op, buf);
  });
  bytes_sent_ +=
      wire_bytes::all_reduce(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                   ReduceOp op) {
  const std::size_t total = count * static_cast<std::size_t>(size());
  const std::size_t elem = dtype_size(dtype);
  const bool may_lend = !overlap(send, total * elem, recv, count * elem);
  Outgoing mine = outgoing(group_, rank_, "reduce_scatter", send, total, dtype, may_lend);
  if (mine.dropped) return group_.skip(rank_, "reduce_scatter");
  group_.join(
      rank_, "reduce_scatter", std::move(mine.part),
      [&](std::int64_t seq, const Parts& parts) {
        check_equal_sizes("reduce_scatter", seq, parts);
        reduce_block(parts, static_cast<std::size_t>(rank_), count, op, recv);
      },
      mine.lent);
  bytes_sent_ +=
      wire_bytes::reduce_scatter(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  const std::size_t total = count * static_cast<std::size_t>(size());
  const std::size_t block = count * dtype_size(dtype);
  const bool may_lend = !overlap(send, total * dtype_size(dtype), recv, total * dtype_size(dtype));
  Outgoing mine = outgoing(group_, rank_, "all_to_all", send, total, dtype, may_lend);
  if (mine.dropped) return group_.skip(rank_, "all_to_all");
  group_.join(
      rank_, "all_to_all", std::move(mine.part),
      [&](std::int64_t seq, const Parts& parts) {
        check_equal_sizes("all_to_all", seq, parts);
        auto* out = static_cast<std::byte*>(recv);
        for (std::size_t p = 0; p < parts.size(); ++p)
          copy_block(out + p * block, parts[p].bytes() + static_cast<std::size_t>(rank_) * block,
                     block);
      },
      mine.lent);
  bytes_sent_ +=
      wire_bytes::all_to_all(count, dtype_size(dtype), static_cast<std::uint64_t>(size()));
}

void ThreadComm::do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "send");
  bytes_sent_ += wire_bytes::send(count, dtype_size(dtype));
  Outgoing message = outgoing(group_, rank_, "send", buf, count, dtype, false);
  if (message.dropped) return;  // lost on the way
  group_.post(rank_, peer, tag, std::move(message.part));
}

void ThreadComm::do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "recv");
  Contribution message = group_.take_message(rank_, peer, tag);
  // A lent message is repaid whatever happens next: its sender waits for that.
  struct Repay {
    detail::ThreadGroup& group;
    int from;
    detail::Loan* loan;
    ~Repay() {
      if (loan != nullptr) group.repay(from, *loan);
    }
  } repay{group_, peer, message.loan};
  CPLAB_CHECK(message.count == count && message.dtype == dtype,
              "recv from rank {} (tag {}): expected {} x {}, rank {} sent {} x {}", peer, tag,
              count, dtype_name(dtype), peer, message.count, dtype_name(message.dtype));
  copy_block(static_cast<std::byte*>(buf), message.bytes(), message.size_bytes());
}

void ThreadComm::do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                              std::size_t recv_count, int from, DType dtype, int tag) {
  // Sends are buffered, so posting first and then waiting cannot deadlock. A large message is
  // lent instead of copied: the receiver usually takes it while this rank waits for its own, and
  // one still posted when this rank goes on becomes a copy then (settle), as a buffered send.
  check_peer(to, "send");
  const std::size_t elem = dtype_size(dtype);
  const bool may_lend = !overlap(send_buf, send_count * elem, recv_buf, recv_count * elem);
  Outgoing message = outgoing(group_, rank_, "send", send_buf, send_count, dtype, may_lend);
  bytes_sent_ += wire_bytes::send(send_count, elem);
  if (message.dropped) return do_recv(recv_buf, recv_count, dtype, from, tag);  // lost on the way
  detail::Loan loan;
  if (message.lent) message.part.loan = &loan;
  group_.post(rank_, to, tag, std::move(message.part));
  if (!message.lent) return do_recv(recv_buf, recv_count, dtype, from, tag);
  try {
    do_recv(recv_buf, recv_count, dtype, from, tag);
  } catch (...) {
    group_.settle(rank_, to, tag, loan, false);  // this rank fails: its message is withdrawn
    throw;
  }
  group_.settle(rank_, to, tag, loan, true);
}

void ThreadComm::do_barrier() {
  Outgoing none = outgoing(group_, rank_, "barrier", nullptr, 0, DType::u8, false);
  if (none.dropped) return group_.skip(rank_, "barrier");
  group_.join(rank_, "barrier", std::move(none.part), [](std::int64_t, const Parts&) {});
}

}  // namespace cplab::sim
