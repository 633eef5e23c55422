#include "comm/rank_threads.hpp"

#include <unistd.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

namespace cplab::sim {
namespace {

// The hooks of the rank this thread serves.
struct RankEndHooks {
  std::vector<std::function<void()>> hooks;
  void run() {
    while (!hooks.empty()) {
      const std::function<void()> done = std::move(hooks.back());
      hooks.pop_back();
      done();
    }
  }
  ~RankEndHooks() { run(); }
};

// Whether this thread is serving a rank of the pool (only such a thread ends a rank before the
// thread itself ends).
thread_local bool serving = false;

RankEndHooks& rank_end_hooks() {
  thread_local RankEndHooks hooks;
  return hooks;
}

// One run's ranks: how many have not returned yet. Lives on the caller's stack; the pool's
// mutex guards it.
struct Batch {
  int running = 0;
  std::condition_variable all_returned;
};

// Idle threads wait for a rank each. The pool is never destroyed (its threads may outlive every
// static object, and an idle one holds nothing); threads beyond kMaxIdle end instead of idling.
class Pool {
 public:
  void run(int n, const std::function<void(int)>& body,
           const std::function<void(int, const std::system_error&)>& refused) {
    Batch batch;
    std::exception_ptr escaped;  // rethrown only once every started rank has returned
    for (int r = 0; r < n; ++r) {
      Worker* worker = nullptr;
      try {
        worker = idle_worker();
      } catch (const std::system_error& e) {
        try {
          refused(r, e);
        } catch (...) {
          escaped = std::current_exception();
        }
        break;
      }
      // Under the lock: a worker that woke early and finished could otherwise be gone already.
      std::lock_guard lock(mutex_);
      worker->body = &body;
      worker->rank = r;
      worker->batch = &batch;
      ++batch.running;
      worker->wake.notify_one();
    }
    {
      std::unique_lock lock(mutex_);
      batch.all_returned.wait(lock, [&] { return batch.running == 0; });
    }
    if (escaped) std::rethrow_exception(escaped);
  }

 private:
  static constexpr std::size_t kMaxIdle = 256;

  struct Worker {
    std::condition_variable wake;
    const std::function<void(int)>* body = nullptr;  // set while it serves a rank
    int rank = -1;
    Batch* batch = nullptr;
  };

  // An idle thread, or a new one (std::system_error when the system refuses it or has no memory
  // for it: either way the rank cannot start, and the caller is told as one refusal).
  Worker* idle_worker() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        Worker* worker = idle_.back();
        idle_.pop_back();
        return worker;
      }
    }
    Worker* worker = nullptr;
    try {
      worker = new Worker;
      std::thread([this, worker] { serve(worker); }).detach();
    } catch (const std::system_error&) {
      delete worker;
      throw;
    } catch (const std::bad_alloc&) {
      delete worker;
      throw std::system_error(std::make_error_code(std::errc::not_enough_memory),
                              "no memory for a rank thread");
    }
    return worker;
  }

  void serve(Worker* worker) {
    std::unique_lock lock(mutex_);
    while (true) {
      worker->wake.wait(lock, [&] { return worker->body != nullptr; });
      const std::function<void(int)>& body = *worker->body;
      const int rank = worker->rank;
      lock.unlock();
      serving = true;
      body(rank);
      rank_end_hooks().run();  // what this rank's thread would have destroyed at its end
      serving = false;
      lock.lock();
      Batch& batch = *worker->batch;
      worker->body = nullptr;
      worker->batch = nullptr;
      const bool stay = idle_.size() < kMaxIdle;
      if (stay) idle_.push_back(worker);
      // Under the lock: the caller may return (and free the batch) as soon as it can take it.
      if (--batch.running == 0) batch.all_returned.notify_one();
      if (!stay) break;
    }
    lock.unlock();
    delete worker;
  }

  std::mutex mutex_;
  std::vector<Worker*> idle_;
};

// The pool of this process: a child made by fork() has none of its parent's threads.
Pool& pool() {
  static std::mutex mutex;
  static Pool* current = nullptr;
  static pid_t owner = 0;
  std::lock_guard lock(mutex);
  if (current == nullptr || owner != ::getpid()) {
    current = new Pool;  // the parent's, in a child, is left as it is: its threads are not here
    owner = ::getpid();
  }
  return *current;
}

}  // namespace

void at_rank_end(std::function<void()> done) {
  // Elsewhere the caller's thread-local state ends with its thread, as it always did (a hook run
  // from a thread-local destructor could find that state destroyed before it).
  if (serving) rank_end_hooks().hooks.push_back(std::move(done));
}

namespace detail {

void run_on_rank_threads(int n, const std::function<void(int)>& body,
                         const std::function<void(int, const std::system_error&)>& refused) {
  pool().run(n, body, refused);
}

}  // namespace detail
}  // namespace cplab::sim
