#pragma once
// The meeting point of a device-sim world's ranks (internal to gpu/comm): the per-collective slots
// where each rank leaves its buffers and the mailboxes of point-to-point messages, on the one
// rendezvous engine of sim/ (rounds, deadlines, the first failure, deadlock detection). Every
// wait ends in an error naming who arrived and who did not, at once when nobody can move.
// Plain host code: tests drive it from threads without a device.
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/rendezvous.hpp"

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
  // Waits for every rank to reach this point; `what` names it in messages.
  void rendezvous(int rank, const std::string& what);

  // The rank left the world: normally, or with an error, which breaks the group (every waiting
  // and later call fails at once with it; the first recorded is kept).
  void returned(int rank);
  void failed(int rank, std::exception_ptr error, const std::string& message);
  bool aborted() const;
  std::exception_ptr first_failure() const;

  std::shared_ptr<Post> post(int from, int to, int tag, const void* buf, std::size_t count,
                             DType dtype);
  std::shared_ptr<Post> take(int from, int to, int tag);
  void finish(const std::shared_ptr<Post>& p, std::string error);
  // The sender waits until its receiver has copied the message (or failed to).
  void wait_done(int from, int to, int tag, const std::shared_ptr<Post>& p);

 private:
  sim::Rendezvous<Arrival, std::shared_ptr<Post>> engine_;
};

}  // namespace cplab::gpu::detail
