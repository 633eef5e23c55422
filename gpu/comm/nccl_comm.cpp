#include "gpu/comm/nccl_comm.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <thread>

#include "comm/wire_bytes.hpp"
#include "core/error.hpp"
#include "gpu/comm/reduce_elem.hpp"
#include "gpu/cuda_check.hpp"

namespace cplab::gpu {
namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(NcclId), "ncclUniqueId is 128 bytes");

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32:
      return ncclFloat32;
    case DType::bf16:
      return ncclBfloat16;
    case DType::f16:
      return ncclFloat16;
    case DType::i64:
      return ncclInt64;
    case DType::i32:
      return ncclInt32;
    case DType::u8:
    case DType::b8:
      return ncclUint8;
  }
  CPLAB_FAIL("nccl: unknown dtype {}", static_cast<int>(t));
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::sum ? ncclSum : ncclMax; }

const std::byte* at(const void* p, std::size_t offset) {
  return static_cast<const std::byte*>(p) + offset;
}
std::byte* at(void* p, std::size_t offset) { return static_cast<std::byte*>(p) + offset; }

}  // namespace

struct NcclComm::Meta {
  std::int64_t count, capacity, dtype, op;
};

NcclId nccl_unique_id() {
  ncclUniqueId id;
  CPLAB_NCCL_CHECK(ncclGetUniqueId(&id));
  NcclId out;
  std::memcpy(out.data(), &id, sizeof id);
  return out;
}

std::unique_ptr<NcclComm> NcclComm::init_rank(const NcclId& id, int nranks, int rank, int device,
                                              std::chrono::milliseconds timeout) {
  CPLAB_CHECK(rank >= 0 && rank < nranks, "nccl: rank {} outside [0, {})", rank, nranks);
  set_device(device);
  ncclUniqueId nid;
  std::memcpy(&nid, id.data(), sizeof nid);
  ncclComm_t comm = nullptr;
  CPLAB_NCCL_CHECK(ncclCommInitRank(&comm, nranks, nid, rank));
  return std::make_unique<NcclComm>(comm, device, timeout, false);
}

NcclComm::NcclComm(ncclComm* comm, int device, std::chrono::milliseconds timeout,
                   bool collective_destroy)
    : comm_(comm), device_(device), timeout_(timeout), collective_destroy_(collective_destroy) {
  set_device(device_);
  CPLAB_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
  CPLAB_NCCL_CHECK(ncclCommCount(comm_, &size_));
  stream_ = std::make_unique<StreamOwner>();
  meta_ = DeviceBuffer(sizeof(Meta) * static_cast<std::size_t>(size_ + 1));
}

NcclComm::~NcclComm() {
  if (comm_ == nullptr) return;
  // Destructors cannot throw; a failure here leaves nothing to clean up that the process keeps.
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(collective_destroy_ ? ncclCommDestroy(comm_) : ncclCommAbort(comm_));
}

void NcclComm::abort() {
  if (comm_ == nullptr) return;
  static_cast<void>(cudaSetDevice(device_));
  static_cast<void>(ncclCommAbort(comm_));
  comm_ = nullptr;
}

void NcclComm::check_alive(const char* what) const {
  CPLAB_CHECK(comm_ != nullptr, "nccl {}: the communicator was aborted by an earlier failure",
              what);
}

void NcclComm::wait(const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    ncclResult_t async = ncclSuccess;
    CPLAB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    const cudaError_t state = async == ncclSuccess ? cudaStreamQuery(stream()) : cudaErrorNotReady;
    if (async == ncclSuccess && state == cudaSuccess) return;
    const bool failed = (async != ncclSuccess && async != ncclInProgress) ||
                        (state != cudaSuccess && state != cudaErrorNotReady);
    const bool late = std::chrono::steady_clock::now() > deadline;
    if (failed || late) {
      static_cast<void>(ncclCommAbort(comm_));  // unblocks the kernels so the stream can drain
      comm_ = nullptr;
      CPLAB_CHECK(!failed, "nccl {}: failed ({}; {}); communicator aborted", what,
                  ncclGetErrorString(async), cuda_error_text(static_cast<int>(state)));
      CPLAB_FAIL(
          "nccl {}: not complete after {} ms (a rank missing, or ranks disagree); communicator "
          "aborted",
          what, timeout_.count());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Every rank's (count, capacity, dtype, op), gathered before the real call so that a mismatch is
// an error on every rank rather than a collective that never completes.
std::vector<NcclComm::Meta> NcclComm::agree(const char* what, std::size_t count,
                                            std::size_t capacity, DType dtype, int op) {
  check_alive(what);
  const Meta mine{static_cast<std::int64_t>(count), static_cast<std::int64_t>(capacity),
                  static_cast<std::int64_t>(dtype), op};
  meta_.upload(&mine, sizeof mine, stream());
  CPLAB_NCCL_CHECK(ncclAllGather(meta_.get(), at(meta_.get(), sizeof(Meta)),
                                 sizeof(Meta) / sizeof(std::int64_t), ncclInt64, comm_, stream()));
  wait(what);
  std::vector<Meta> all(static_cast<std::size_t>(size_));
  CPLAB_CUDA_CHECK(cudaMemcpy(all.data(), at(meta_.get(), sizeof(Meta)), sizeof(Meta) * all.size(),
                              cudaMemcpyDeviceToHost));
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(all[r].dtype == all[0].dtype && all[r].op == all[0].op,
                "nccl {}: rank {} passes dtype {} / op {} but rank 0 passes {} / {}", what, r,
                dtype_name(static_cast<DType>(all[r].dtype)), all[r].op,
                dtype_name(static_cast<DType>(all[0].dtype)), all[0].op);
  }
  return all;
}

void NcclComm::do_all_gather(const void* send, void* recv, std::size_t count, DType dtype) {
  const auto all = agree("all_gather", count, 0, dtype, -1);
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(all[r].count == all[0].count,
                "nccl all_gather: rank {} passes count {} but rank 0 passes {}", r, all[r].count,
                all[0].count);
  }
  CPLAB_NCCL_CHECK(ncclAllGather(send, recv, count, nccl_type(dtype), comm_, stream()));
  wait("all_gather");
  bytes_sent_ +=
      sim::wire_bytes::all_gather(count, dtype_size(dtype), static_cast<std::uint64_t>(size_));
}

std::vector<std::size_t> NcclComm::do_all_gather_v(const void* send, std::size_t count, void* recv,
                                                   std::size_t recv_capacity, DType dtype) {
  const auto all = agree("all_gather_v", count, recv_capacity, dtype, -1);
  std::vector<std::size_t> counts;
  std::size_t total = 0;
  for (const Meta& m : all) {
    counts.push_back(static_cast<std::size_t>(m.count));
    total += counts.back();
  }
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(static_cast<std::size_t>(all[r].capacity) >= total,
                "nccl all_gather_v: rank {} has room for {} elements, the ranks send {}", r,
                all[r].capacity, total);
  }
  const std::size_t es = dtype_size(dtype);
  CPLAB_NCCL_CHECK(ncclGroupStart());
  std::size_t offset = 0;
  for (int p = 0; p < size_; ++p) {
    if (count > 0) CPLAB_NCCL_CHECK(ncclSend(send, count, nccl_type(dtype), p, comm_, stream()));
    if (counts[p] > 0)
      CPLAB_NCCL_CHECK(
          ncclRecv(at(recv, offset * es), counts[p], nccl_type(dtype), p, comm_, stream()));
    offset += counts[p];
  }
  CPLAB_NCCL_CHECK(ncclGroupEnd());
  wait("all_gather_v");
  bytes_sent_ += sim::wire_bytes::all_gather(count, es, static_cast<std::uint64_t>(size_));
  return counts;
}

void NcclComm::do_all_reduce(void* buf, std::size_t count, DType dtype, ReduceOp op) {
  reduce_elem(dtype, "nccl all_reduce");
  const auto all = agree("all_reduce", count, 0, dtype, static_cast<int>(op));
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(all[r].count == all[0].count,
                "nccl all_reduce: rank {} passes count {} but rank 0 passes {}", r, all[r].count,
                all[0].count);
  }
  CPLAB_NCCL_CHECK(ncclAllReduce(buf, buf, count, nccl_type(dtype), nccl_op(op), comm_, stream()));
  wait("all_reduce");
  bytes_sent_ +=
      sim::wire_bytes::all_reduce(count, dtype_size(dtype), static_cast<std::uint64_t>(size_));
}

void NcclComm::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                 ReduceOp op) {
  reduce_elem(dtype, "nccl reduce_scatter");
  const auto all = agree("reduce_scatter", count, 0, dtype, static_cast<int>(op));
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(all[r].count == all[0].count,
                "nccl reduce_scatter: rank {} passes count {} but rank 0 passes {}", r,
                all[r].count, all[0].count);
  }
  CPLAB_NCCL_CHECK(
      ncclReduceScatter(send, recv, count, nccl_type(dtype), nccl_op(op), comm_, stream()));
  wait("reduce_scatter");
  bytes_sent_ +=
      sim::wire_bytes::reduce_scatter(count, dtype_size(dtype), static_cast<std::uint64_t>(size_));
}

void NcclComm::do_all_to_all(const void* send, void* recv, std::size_t count, DType dtype) {
  const auto all = agree("all_to_all", count, 0, dtype, -1);
  for (int r = 0; r < size_; ++r) {
    CPLAB_CHECK(all[r].count == all[0].count,
                "nccl all_to_all: rank {} passes count {} but rank 0 passes {}", r, all[r].count,
                all[0].count);
  }
  const std::size_t bytes = count * dtype_size(dtype);
  if (count > 0) {
    CPLAB_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < size_; ++p) {
      CPLAB_NCCL_CHECK(ncclSend(at(send, p * bytes), count, nccl_type(dtype), p, comm_, stream()));
      CPLAB_NCCL_CHECK(ncclRecv(at(recv, p * bytes), count, nccl_type(dtype), p, comm_, stream()));
    }
    CPLAB_NCCL_CHECK(ncclGroupEnd());
  }
  wait("all_to_all");
  bytes_sent_ +=
      sim::wire_bytes::all_to_all(count, dtype_size(dtype), static_cast<std::uint64_t>(size_));
}

void NcclComm::do_send_recv(const void* send_buf, std::size_t send_count, int to, void* recv_buf,
                            std::size_t recv_count, int from, DType dtype, int /*tag*/) {
  check_alive("send_recv");
  CPLAB_CHECK(to >= -1 && to < size_ && from >= -1 && from < size_,
              "nccl send_recv: peers {} and {} outside [0, {})", to, from, size_);
  // The sizes travel first, so that a receiver expecting another size fails instead of waiting.
  const std::int64_t header[2] = {static_cast<std::int64_t>(send_count),
                                  static_cast<std::int64_t>(dtype)};
  meta_.upload(header, sizeof header, stream());
  auto* incoming = reinterpret_cast<std::int64_t*>(at(meta_.get(), sizeof(Meta)));
  CPLAB_NCCL_CHECK(ncclGroupStart());
  if (to >= 0) CPLAB_NCCL_CHECK(ncclSend(meta_.get(), 2, ncclInt64, to, comm_, stream()));
  if (from >= 0) CPLAB_NCCL_CHECK(ncclRecv(incoming, 2, ncclInt64, from, comm_, stream()));
  CPLAB_NCCL_CHECK(ncclGroupEnd());
  wait("send_recv (sizes)");
  if (from >= 0) {
    std::int64_t got[2];
    CPLAB_CUDA_CHECK(cudaMemcpy(got, incoming, sizeof got, cudaMemcpyDeviceToHost));
    CPLAB_CHECK(got[0] == static_cast<std::int64_t>(recv_count) &&
                    got[1] == static_cast<std::int64_t>(dtype),
                "nccl: rank {} sends {} × {} to rank {}, which expects {} × {}", from, got[0],
                dtype_name(static_cast<DType>(got[1])), rank_, recv_count, dtype_name(dtype));
  }
  CPLAB_NCCL_CHECK(ncclGroupStart());
  if (to >= 0 && send_count > 0)
    CPLAB_NCCL_CHECK(ncclSend(send_buf, send_count, nccl_type(dtype), to, comm_, stream()));
  if (from >= 0 && recv_count > 0)
    CPLAB_NCCL_CHECK(ncclRecv(recv_buf, recv_count, nccl_type(dtype), from, comm_, stream()));
  CPLAB_NCCL_CHECK(ncclGroupEnd());
  wait("send_recv");
  if (to >= 0) bytes_sent_ += sim::wire_bytes::send(send_count, dtype_size(dtype));
}

void NcclComm::do_send(const void* buf, std::size_t count, DType dtype, int peer, int tag) {
  do_send_recv(buf, count, peer, nullptr, 0, -1, dtype, tag);
}

void NcclComm::do_recv(void* buf, std::size_t count, DType dtype, int peer, int tag) {
  do_send_recv(nullptr, 0, -1, buf, count, peer, dtype, tag);
}

void NcclComm::do_barrier() { agree("barrier", 0, 0, DType::u8, -1); }

}  // namespace cplab::gpu
