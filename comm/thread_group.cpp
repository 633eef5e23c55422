#include "comm/thread_group.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace cplab::sim::detail {
namespace {

// The default corruption: every element moves by one, so no value survives unchanged.
void increment_each(void* data, std::size_t count, DType dtype) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* values = static_cast<T*>(data);
    for (std::size_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        values[i] = !values[i];
      } else {
        values[i] = from_double<T>(to_double(values[i]) + 1.0);
      }
    }
  });
}

}  // namespace

Contribution Contribution::copy_of(const void* source, std::size_t count, DType dtype) {
  Contribution part;
  part.count = count;
  part.dtype = dtype;
  part.data.resize(count * dtype_size(dtype));
  if (!part.data.empty()) std::memcpy(part.data.data(), source, part.data.size());
  return part;
}

Contribution Contribution::lent_from(const void* source, std::size_t count, DType dtype) {
  Contribution part;
  part.lent = static_cast<const std::byte*>(source);
  part.count = count;
  part.dtype = dtype;
  return part;
}

ThreadGroup::ThreadGroup(int size, const WorldOptions& options, RankFibers* fibers)
    : Rendezvous(size, {.timeout = options.timeout, .label = {}, .fibers = fibers}),
      faults_(options.faults),
      calls_(static_cast<std::size_t>(size)) {}

const Fault* ThreadGroup::fault_for(int rank, const std::string& call) {
  std::lock_guard lock(faults_mutex_);
  const int occurrence = calls_[rank][call]++;
  for (const Fault& fault : faults_) {
    if (fault.rank == rank && fault.call == call &&
        (fault.occurrence < 0 || fault.occurrence == occurrence)) {
      ++faults_fired_;
      return &fault;
    }
  }
  return nullptr;
}

void ThreadGroup::apply(int rank, const Fault& fault, Contribution& part) {
  switch (fault.kind) {
    case Fault::Kind::corrupt:
      (fault.corrupt ? fault.corrupt : increment_each)(part.data.data(), part.count, part.dtype);
      break;
    case Fault::Kind::reorder: {
      const std::size_t elem = dtype_size(part.dtype);
      for (std::size_t i = 0, j = part.count; i + 1 < j; ++i, --j) {
        std::swap_ranges(part.data.begin() + static_cast<std::ptrdiff_t>(i * elem),
                         part.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * elem),
                         part.data.begin() + static_cast<std::ptrdiff_t>((j - 1) * elem));
      }
      break;
    }
    case Fault::Kind::delay:
      // A late contribution, not a race fix: the rank is busy (never deadlocked) meanwhile, and
      // the wait ends early if the group fails.
      pause(rank, fault.delay,
            fmt::format("delayed {} ms by a fault before {}", fault.delay.count(), fault.call));
      break;
    case Fault::Kind::drop:
      break;
  }
}

Contribution ThreadGroup::take_message(int to, int from, int tag) {
  return take(to, from, tag, [](Contribution& message) {
    if (message.loan != nullptr) message.loan->state = Loan::State::taken;
  });
}

void ThreadGroup::repay(int from, Loan& loan) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  loan.state = Loan::State::repaid;
  wake(from);
}

void ThreadGroup::settle(int from, int to, int tag, Loan& loan, bool keep) {
  Lock lock(mutex_);
  const WakeOnRelease wakes{*this, lock};
  if (loan.state == Loan::State::posted) {
    auto& box = mailbox(from, to, tag);
    const auto it = std::find_if(box.begin(), box.end(),
                                 [&](const Contribution& m) { return m.loan == &loan; });
    if (it != box.end()) {
      if (keep) {
        try {
          Contribution copy = Contribution::copy_of(it->lent, it->count, it->dtype);
          *it = std::move(copy);
        } catch (...) {
          // No copy (out of memory): the message must not stay behind pointing into a buffer
          // its sender is about to leave. Withdrawn, it fails the sender (and so the group).
          box.erase(it);
          loan.state = Loan::State::repaid;
          throw;
        }
      } else {
        box.erase(it);
      }
    }
    loan.state = Loan::State::repaid;
    return;
  }
  wait_bounded(lock, from, "letting its receiver read its message",
               [&] { return loan.state == Loan::State::repaid; });
}

std::int64_t ThreadGroup::faults_fired() const {
  std::lock_guard lock(faults_mutex_);
  return faults_fired_;
}

}  // namespace cplab::sim::detail
