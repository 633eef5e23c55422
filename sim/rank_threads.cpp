#include "sim/rank_threads.hpp"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
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
    for (int r = 0; r < n; ++r) {
      Worker* worker = nullptr;
      try {
        worker = idle_worker();
      } catch (const std::system_error& e) {
        refused(r, e);
        break;
      }
      {
        std::lock_guard lock(mutex_);
        worker->body = &body;
        worker->rank = r;
        worker->batch = &batch;
        ++batch.running;
      }
      worker->wake.notify_one();
    }
    std::unique_lock lock(mutex_);
    batch.all_returned.wait(lock, [&] { return batch.running == 0; });
  }

 private:
  static constexpr std::size_t kMaxIdle = 256;

  struct Worker {
    std::condition_variable wake;
    const std::function<void(int)>* body = nullptr;  // set while it serves a rank
    int rank = -1;
    Batch* batch = nullptr;
  };

  // An idle thread, or a new one (std::system_error when the system refuses it).
  Worker* idle_worker() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        Worker* worker = idle_.back();
        idle_.pop_back();
        return worker;
      }
    }
    auto* worker = new Worker;
    try {
      std::thread([this, worker] { serve(worker); }).detach();
    } catch (...) {
      delete worker;
      throw;
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
      body(rank);
      rank_end_hooks().run();  // what this rank's thread would have destroyed at its end
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

void at_rank_end(std::function<void()> done) { rank_end_hooks().hooks.push_back(std::move(done)); }

namespace detail {

void run_on_rank_threads(int n, const std::function<void(int)>& body,
                         const std::function<void(int, const std::system_error&)>& refused) {
  pool().run(n, body, refused);
}

}  // namespace detail
}  // namespace cplab::sim
