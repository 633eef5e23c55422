#include "mpi/mpi_comm.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/wire_bytes.hpp"
#include "core/error.hpp"
#include "mpi/session.hpp"
#include "mpi/transport.hpp"

namespace cplab::mpi {
namespace {

using detail::Header;
using detail::Kind;
using Parts = std::vector<MpiComm::Part>;

std::string sizes_of(const Parts& parts) {
  std::vector<std::string> listed;
  for (std::size_t r = 0; r < parts.size(); ++r)
    listed.push_back(
        fmt::format("rank {}: {} x {}", r, parts[r].count, dtype_name(parts[r].dtype)));
  return fmt::format("{}", fmt::join(listed, ", "));
}

void check_equal_sizes(const std::string& call, const Parts& parts) {
  for (const MpiComm::Part& part : parts) {
    CPLAB_CHECK(part.count == parts[0].count && part.dtype == parts[0].dtype,
                "{}: sizes disagree: {}", call, sizes_of(parts));
  }
}

template <typename T>
T combine(T a, T b, ReduceOp op) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    const float x = static_cast<float>(a), y = static_cast<float>(b);
    return T(op == ReduceOp::sum ? x + y : std::max(x, y));
  } else {
    return op == ReduceOp::sum ? static_cast<T>(a + b) : std::max(a, b);
  }
}

// out = op over ranks, in rank order (the order ThreadComm reduces in), of each part's block.
void reduce_parts(const Parts& parts, std::size_t count, ReduceOp op, void* out) {
  visit_dtype(parts[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* result = static_cast<T*>(out);
    for (std::size_t i = 0; i < count; ++i) {
      T acc;
      std::memcpy(&acc, parts[0].bytes.data() + i * sizeof(T), sizeof(T));
      for (std::size_t r = 1; r < parts.size(); ++r) {
        T next;
        std::memcpy(&next, parts[r].bytes.data() + i * sizeof(T), sizeof(T));
        acc = combine(acc, next, op);
      }
      result[i] = acc;
    }
  });
}

// Fault injection for the tests of a dying rank: CPLAB_MPI_FAULT="kill RANK N" makes world rank
// RANK send itself SIGKILL as it enters its N-th collective (0-based, counted over the process).
struct KillFault {
  int rank = -1;
  std::int64_t at = -1;
};
const KillFault& kill_fault() {
  static const KillFault fault = [] {
    KillFault f;
    if (const char* text = std::getenv("CPLAB_MPI_FAULT")) {
      long long at = -1;
      int rank = -1;
      CPLAB_CHECK(std::sscanf(text, "kill %d %lld", &rank, &at) == 2,
                  "CPLAB_MPI_FAULT='{}' is not 'kill RANK N'", text);
      f.rank = rank;
      f.at = at;
    }
    return f;
  }();
  return fault;
}
std::int64_t g_collectives_entered = 0;

void maybe_die(int world_rank) {
  const KillFault& fault = kill_fault();
  if (fault.rank == world_rank && g_collectives_entered == fault.at) ::raise(SIGKILL);
  ++g_collectives_entered;
}

}  // namespace

MpiComm::MpiComm(int size, std::uint32_t epoch, std::chrono::milliseconds timeout)
    : size_(size), epoch_(epoch), timeout_(timeout) {
  const World w = world();
  CPLAB_CHECK(size >= 1 && size <= w.size, "an MPI group of {} ranks in a world of {} processes",
              size, w.size);
  CPLAB_CHECK(w.rank < size, "world rank {} is not in a group of {} ranks", w.rank, size);
  rank_ = w.rank;
  set_activity(computing());
}

std::string MpiComm::computing() const {
  return fmt::format("computing in run {} as rank {} of {}", epoch_, rank_, size_);
}

void MpiComm::check_peer(int peer, const char* what) const {
  CPLAB_CHECK(peer >= 0 && peer < size_, "{}: peer rank {} out of range [0, {})", what, peer,
              size_);
}

std::vector<MpiComm::Part> MpiComm::exchange(int kind_value, const void* data, std::size_t count,
                                             DType dtype, bool per_rank) {
  const Kind kind = static_cast<Kind>(kind_value);
  maybe_die(rank_);
  const std::uint64_t seq = seq_++;
  const std::string call = fmt::format("{} #{}", detail::kind_name(kind), seq);
  set_activity(fmt::format("in {} of a group of {} (epoch {})", call, size_, epoch_));
  const std::size_t block = count * dtype_size(dtype);
  const auto* bytes = static_cast<const std::byte*>(data);
  Header header;
  header.epoch = epoch_;
  header.seq = seq;
  header.kind = kind;
  header.dtype = static_cast<std::uint8_t>(dtype);
  header.count = count;
  std::vector<int> peers;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    peers.push_back(q);
    detail::post(q, detail::kCollectiveTag, header,
                 per_rank ? bytes + static_cast<std::size_t>(q) * block : bytes, block);
  }
  sim::RankActivity activity;
  activity.kind = sim::RankActivity::Kind::collective;
  activity.call = detail::kind_name(kind);
  activity.seq = static_cast<std::int64_t>(seq);
  std::map<int, detail::Message> got =
      detail::collect(peers, detail::kCollectiveTag, epoch_, timeout_.count(), true,
                      {call, rank_, size_, activity, true});
  Parts parts(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    Part& part = parts[static_cast<std::size_t>(r)];
    if (r == rank_) {
      part.count = count;
      part.dtype = dtype;
      const std::byte* mine = per_rank ? bytes + static_cast<std::size_t>(r) * block : bytes;
      part.bytes.assign(mine, mine + block);
      continue;
    }
    detail::Message& m = got.at(r);
    CPLAB_CHECK(m.header.kind == kind && m.header.seq == seq, "{}: rank {} called {} #{} instead",
                call, r, detail::kind_name(m.header.kind), m.header.seq);
    part.count = static_cast<std::size_t>(m.header.count);
    part.dtype = static_cast<DType>(m.header.dtype);
    CPLAB_CHECK(m.payload.size() == part.count * dtype_size(part.dtype),
                "{}: rank {} sent {} bytes for {} x {}", call, r, m.payload.size(), part.count,
                dtype_name(part.dtype));
    part.bytes = std::move(m.payload);
  }
  set_activity(computing());
  return parts;
}

void MpiComm::do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  const Parts parts = exchange(static_cast<int>(Kind::all_gather), send, count, dtype, false);
  check_equal_sizes(fmt::format("all_gather #{}", seq_ - 1), parts);
  auto* out = static_cast<std::byte*>(recv);
  for (const Part& part : parts) {
    if (!part.bytes.empty()) std::memcpy(out, part.bytes.data(), part.bytes.size());
    out += part.bytes.size();
  }
  bytes_sent_ += sim::wire_bytes::all_gather(count, dtype_size(dtype), size_);
}

std::vector<std::size_t> MpiComm::do_all_gather_v(const void* send, std::size_t count, void* recv,
                                                  std::size_t recv_capacity, DType dtype) {
  const Parts parts = exchange(static_cast<int>(Kind::all_gather_v), send, count, dtype, false);
  const std::string call = fmt::format("all_gather_v #{}", seq_ - 1);
  std::vector<std::size_t> counts;
  std::size_t total = 0;
  for (const Part& part : parts) {
    CPLAB_CHECK(part.dtype == dtype, "{}: dtypes disagree: {}", call, sizes_of(parts));
    counts.push_back(part.count);
    total += part.count;
  }
  CPLAB_CHECK(total <= recv_capacity, "{}: {} elements arrive ({}), room for {}", call, total,
              sizes_of(parts), recv_capacity);
  auto* out = static_cast<std::byte*>(recv);
  for (const Part& part : parts) {
    if (!part.bytes.empty()) std::memcpy(out, part.bytes.data(), part.bytes.size());
    out += part.bytes.size();
  }
  bytes_sent_ += sim::wire_bytes::all_gather(count, dtype_size(dtype), size_);
  return counts;
}

void MpiComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  const Parts parts = exchange(static_cast<int>(Kind::all_reduce), buf, count, dtype, false);
  check_equal_sizes(fmt::format("all_reduce #{}", seq_ - 1), parts);
  reduce_parts(parts, count, op, buf);
  bytes_sent_ += sim::wire_bytes::all_reduce(count, dtype_size(dtype), size_);
}

void MpiComm::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                ReduceOp op) {
  const Parts parts = exchange(static_cast<int>(Kind::reduce_scatter), send, count, dtype, true);
  check_equal_sizes(fmt::format("reduce_scatter #{}", seq_ - 1), parts);
  reduce_parts(parts, count, op, recv);
  bytes_sent_ += sim::wire_bytes::reduce_scatter(count, dtype_size(dtype), size_);
}

void MpiComm::do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  const Parts parts = exchange(static_cast<int>(Kind::all_to_all), send, count, dtype, true);
  check_equal_sizes(fmt::format("all_to_all #{}", seq_ - 1), parts);
  auto* out = static_cast<std::byte*>(recv);
  for (const Part& part : parts) {
    if (!part.bytes.empty()) std::memcpy(out, part.bytes.data(), part.bytes.size());
    out += part.bytes.size();
  }
  bytes_sent_ += sim::wire_bytes::all_to_all(count, dtype_size(dtype), size_);
}

void MpiComm::do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "send");
  CPLAB_CHECK(tag >= 0 && tag <= detail::max_user_tag(), "send: tag {} outside [0, {}]", tag,
              detail::max_user_tag());
  Header header;
  header.epoch = epoch_;
  header.kind = Kind::message;
  header.dtype = static_cast<std::uint8_t>(dtype);
  header.tag = tag;
  header.count = count;
  detail::post(peer, detail::kUserTagBase + tag, header, buf, count * dtype_size(dtype));
  bytes_sent_ += sim::wire_bytes::send(count, dtype_size(dtype));
}

void MpiComm::do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  check_peer(peer, "recv");
  CPLAB_CHECK(tag >= 0 && tag <= detail::max_user_tag(), "recv: tag {} outside [0, {}]", tag,
              detail::max_user_tag());
  const std::string call = fmt::format("recv from rank {} (tag {})", peer, tag);
  set_activity(fmt::format("in {} (epoch {})", call, epoch_));
  sim::RankActivity activity;
  activity.kind = sim::RankActivity::Kind::recv;
  activity.peer = peer;
  activity.tag = tag;
  std::map<int, detail::Message> got =
      detail::collect({peer}, detail::kUserTagBase + tag, epoch_, timeout_.count(), true,
                      {call, rank_, size_, activity, true});
  const detail::Message& m = got.at(peer);
  const auto sent = static_cast<DType>(m.header.dtype);
  CPLAB_CHECK(m.header.count == count && sent == dtype,
              "recv from rank {} (tag {}): expected {} x {}, rank {} sent {} x {}", peer, tag,
              count, dtype_name(dtype), peer, m.header.count, dtype_name(sent));
  if (!m.payload.empty()) std::memcpy(buf, m.payload.data(), m.payload.size());
  set_activity(computing());
}

void MpiComm::do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                           std::size_t recv_count, int from, DType dtype, int tag) {
  // Sends are buffered, so posting first and then waiting cannot deadlock.
  do_send(send_buf, send_count, dtype, to, tag);
  do_recv(recv_buf, recv_count, dtype, from, tag);
}

void MpiComm::do_barrier() {
  exchange(static_cast<int>(Kind::barrier), nullptr, 0, DType::u8, false);
}

void MpiComm::abort_run(const std::string& message) {
  detail::post_abort(size_, rank_, epoch_, message);
}

}  // namespace cplab::mpi
