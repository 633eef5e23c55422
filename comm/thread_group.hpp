#pragma once
// The state the ranks of one World::run share: the rendezvous engine (rounds, mailboxes, what each
// rank is doing, the first failure, deadlines and deadlock detection: comm/rendezvous.hpp) and the
// fault plan, which alters contributions before they reach the engine.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "comm/rendezvous.hpp"
#include "comm/thread_comm.hpp"
#include "core/tensor.hpp"

namespace cplab::sim::detail {

// A message lent by its sender: the receiver reads the sender's buffer in place and then repays
// the loan; a sender that must go on before the message was taken makes it a copy of its own, so
// a send stays buffered (it never waits for its receive).
struct Loan {
  enum class State : std::uint8_t { posted, taken, repaid };
  State state = State::posted;
};

// One rank's part of a collective, or one point-to-point message: a copy of its own, or (lent)
// the sender's buffer itself, read in place while the sender waits (Rendezvous::join's `held`,
// or `loan` for a message).
struct Contribution {
  std::vector<std::byte, UninitializedAllocator<std::byte>> data;  // large ones: block cache
  const std::byte* lent = nullptr;
  Loan* loan = nullptr;  // a lent message
  std::size_t count = 0;
  DType dtype = DType::u8;

  const std::byte* bytes() const { return lent != nullptr ? lent : data.data(); }
  std::size_t size_bytes() const { return count * dtype_size(dtype); }

  static Contribution copy_of(const void* source, std::size_t count, DType dtype);
  static Contribution lent_from(const void* source, std::size_t count, DType dtype);
};

class ThreadGroup : public Rendezvous<Contribution> {
 public:
  ThreadGroup(int size, const WorldOptions& options, RankFibers* fibers = nullptr);

  // The fault planned for this call of `call` on `rank` (calls are counted per rank and name), or
  // null. Applying it: corrupt and reorder alter `part`, delay waits; drop is up to the caller.
  const Fault* fault_for(int rank, const std::string& call);
  void apply(int rank, const Fault& fault, Contribution& part);
  std::int64_t faults_fired() const;

  // Lent messages. take_message marks a lent message taken; repay (on every path, once the
  // receiver has read it) lets its sender go; settle is the sender's last step: it waits for a
  // taken message to be repaid, and makes one still posted a copy (`keep`) or withdraws it.
  Contribution take_message(int to, int from, int tag);
  void repay(int from, Loan& loan);
  void settle(int from, int to, int tag, Loan& loan, bool keep);

 private:
  const std::vector<Fault> faults_;
  mutable std::mutex faults_mutex_;
  std::vector<std::map<std::string, int>> calls_;  // per rank: calls of each name so far
  std::int64_t faults_fired_ = 0;
};

}  // namespace cplab::sim::detail
