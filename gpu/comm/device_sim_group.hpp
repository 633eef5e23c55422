#pragma once
// The meeting point of a device-sim world's ranks (internal to gpu/comm): a reusable rendezvous
// with a timeout, the per-collective slots where each rank leaves its buffers, and the mailboxes of
// point-to-point messages. Every wait ends in an error naming who arrived and who did not.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "sim/comm.hpp"

namespace cplab::gpu::detail {

struct Arrival {
  const char* op = "";
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  std::size_t capacity = 0;  // all_gather_v: room in recv
  DType dtype = DType::u8;
  ReduceOp reduce = ReduceOp::sum;
};

// A send waiting for its receive: the receiver copies, then marks it done (or failed).
struct Post {
  const void* buf = nullptr;
  std::size_t count = 0;
  DType dtype = DType::u8;
  bool done = false;
  std::string error;
};

struct SimGroup {
  SimGroup(int size, int device, std::chrono::milliseconds timeout);

  const int size;
  const int device;
  const std::chrono::milliseconds timeout;

  // Every rank's Arrival for the collective all of them reached; throws on mismatched calls
  // (other op, count or dtype) identically on every rank, so none is left waiting.
  std::vector<Arrival> arrive(int rank, const Arrival& mine, bool same_count);
  // Waits for every rank to reach this point; `what` names it in the timeout message.
  void rendezvous(int rank, const std::string& what);
  // Marks the group broken so that every waiting and later call fails at once with `reason`.
  void abort(const std::string& reason);
  bool aborted();

  std::shared_ptr<Post> post(int from, int to, int tag, const void* buf, std::size_t count,
                             DType dtype);
  std::shared_ptr<Post> take(int from, int to, int tag, const std::string& what);
  void finish(const std::shared_ptr<Post>& p, std::string error);
  void wait_done(const std::shared_ptr<Post>& p, const std::string& what);

 private:
  void throw_if_aborted(const std::string& what) const;  // with the mutex held

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Arrival> slots_;
  std::vector<char> waiting_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::string abort_reason_;
  std::map<std::tuple<int, int, int>, std::deque<std::shared_ptr<Post>>> mail_;
};

}  // namespace cplab::gpu::detail
