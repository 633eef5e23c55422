#include "comm/rank_fibers.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define CPLAB_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPLAB_FIBERS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CPLAB_FIBERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CPLAB_FIBERS_TSAN 1
#endif
#endif
#ifdef CPLAB_FIBERS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// The C++ runtime's per-thread exception state (the Itanium C++ ABI's __cxa_eh_globals): the
// exceptions being handled, innermost first, and the count of those thrown but not yet caught. A
// fiber that parks inside a catch block (Rendezvous::join finishing its round after a failure)
// would otherwise leave its exception on the thread's stack for the next fiber to pop.
namespace __cxxabiv1 {
struct __cxa_eh_globals;
extern "C" __cxa_eh_globals* __cxa_get_globals() noexcept;
}  // namespace __cxxabiv1

namespace cplab::sim {

bool fibers_supported() {
#ifdef CPLAB_FIBERS_TSAN
  return false;
#else
  return true;
#endif
}

namespace detail {
namespace {

struct EhGlobals {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};

void save_eh(EhGlobals& into) {
  std::memcpy(static_cast<void*>(&into), __cxxabiv1::__cxa_get_globals(), sizeof(EhGlobals));
}
void restore_eh(const EhGlobals& from) {
  std::memcpy(__cxxabiv1::__cxa_get_globals(), &from, sizeof(EhGlobals));
}

// Deep enough for what a rank runs (fmt, Eigen's stack temporaries of up to 128 KiB, unwinding);
// pages are committed only when touched. ASan's redzones and fake frames need more.
#ifdef CPLAB_FIBERS_ASAN
constexpr std::size_t kStackBytes = std::size_t{8} << 20;
#else
constexpr std::size_t kStackBytes = std::size_t{2} << 20;
#endif
constexpr std::size_t kGuardBytes = 64 << 10;  // unmapped below the stack: an overflow faults
constexpr std::size_t kPooledStacks = 256;

// A switched-out context and the jump between two. On x86-64 it is a stack pointer: the switch
// pushes the callee-saved registers, MXCSR and the x87 control word, and touches no signal mask
// (glibc's swapcontext makes two system calls per switch for it, a fifth of a C = 64 case).
// Elsewhere it is a ucontext.
#if defined(__x86_64__)
extern "C" void cplab_fiber_switch(void** save_sp, void* load_sp);
asm(R"(
    .text
    .p2align 4
    .globl cplab_fiber_switch
    .hidden cplab_fiber_switch
    .type cplab_fiber_switch, @function
cplab_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size cplab_fiber_switch, .-cplab_fiber_switch
)");

struct Context {
  void* sp = nullptr;
};

void jump(Context& from, const Context& to) { cplab_fiber_switch(&from.sp, to.sp); }

// A context that starts `entry` (which never returns) on the stack [stack, stack + size): its
// first switch pops zeroed registers and this thread's MXCSR and x87 control word, then returns
// into entry with the stack aligned as for a call.
void prepare(Context& context, void* stack, std::size_t size, void (*entry)()) {
  const std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(stack) + size) & ~std::uintptr_t{15};
  auto* words = reinterpret_cast<std::uint64_t*>(top);
  words[-1] = 0;  // entry's return address: it never returns
  words[-2] = reinterpret_cast<std::uint64_t>(entry);
  for (int i = 3; i <= 8; ++i) words[-i] = 0;  // rbp, rbx, r12-r15
  std::uint32_t mxcsr = 0;
  std::uint16_t x87 = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(x87));
  auto* controls = reinterpret_cast<unsigned char*>(top - 72);
  std::memcpy(controls, &mxcsr, sizeof mxcsr);
  std::memcpy(controls + 4, &x87, sizeof x87);
  context.sp = controls;
}
#else
struct Context {
  ucontext_t uc{};
};

void jump(Context& from, const Context& to) { ::swapcontext(&from.uc, &to.uc); }

void prepare(Context& context, void* stack, std::size_t size, void (*entry)()) {
  ::getcontext(&context.uc);
  context.uc.uc_stack.ss_sp = stack;
  context.uc.uc_stack.ss_size = size;
  context.uc.uc_link = nullptr;
  ::makecontext(&context.uc, entry, 0);
}
#endif

// Stacks are kept per thread from one run to the next: a sweep runs thousands of small Worlds.
class StackPool {
 public:
  ~StackPool() {
    for (void* base : free_) ::munmap(base, kGuardBytes + kStackBytes);
  }
  // The usable part of a fresh or reused stack.
  void* take() {
    if (!free_.empty()) {
      void* base = free_.back();
      free_.pop_back();
      return static_cast<char*>(base) + kGuardBytes;
    }
    void* base = ::mmap(nullptr, kGuardBytes + kStackBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    if (::mprotect(base, kGuardBytes, PROT_NONE) != 0) {
      ::munmap(base, kGuardBytes + kStackBytes);
      throw std::bad_alloc();
    }
    return static_cast<char*>(base) + kGuardBytes;
  }
  void give_back(void* stack) {
    void* base = static_cast<char*>(stack) - kGuardBytes;
    if (free_.size() < kPooledStacks) {
      free_.push_back(base);
    } else {
      ::munmap(base, kGuardBytes + kStackBytes);
    }
  }

 private:
  std::vector<void*> free_;
};

StackPool& stack_pool() {
  thread_local StackPool pool;
  return pool;
}

}  // namespace

struct RankFibers::State {
  enum class Run : std::uint8_t { ready, running, parked, done };
  struct Fiber {
    Context context;
    void* stack = nullptr;
    Run run = Run::ready;
    bool woken = false;      // woken while not parked: its next park returns at once
    bool timed_out = false;  // its park ended at the deadline
    std::optional<Clock::time_point> deadline;
    RankTag tag{};  // while it is not running
    EhGlobals eh{};
    void* fake_stack = nullptr;  // ASan's fake frames of this fiber while it is switched out
  };

  std::vector<Fiber> fibers;
  std::deque<int> ready;  // in the order they were woken
  const std::function<void(int)>* body = nullptr;
  int current = -1;
  int done = 0;
  std::thread::id owner;
  Context main;
  RankTag main_tag{};
  EhGlobals main_eh{};
  const void* main_stack = nullptr;  // the running thread's stack, for ASan's switch back
  std::size_t main_stack_size = 0;
  void* main_fake_stack = nullptr;

  static thread_local State* running;

  static void entry();
  void switch_to(int rank);
  void switch_to_main(Fiber& fiber, bool ending);
  void expire_deadlines(bool wait);
};

thread_local RankFibers::State* RankFibers::State::running = nullptr;

void RankFibers::State::entry() {
  State& s = *running;
  const int rank = s.current;
#ifdef CPLAB_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &s.main_stack, &s.main_stack_size);
#endif
  (*s.body)(rank);
  Fiber& fiber = s.fibers[static_cast<std::size_t>(rank)];
  fiber.run = Run::done;
  ++s.done;
  s.switch_to_main(fiber, true);
}

void RankFibers::State::switch_to(int rank) {
  Fiber& fiber = fibers[static_cast<std::size_t>(rank)];
  fiber.run = Run::running;
  current = rank;
  main_tag = current_rank_tag();
  save_eh(main_eh);
  current_rank_tag() = fiber.tag;
  restore_eh(fiber.eh);
#ifdef CPLAB_FIBERS_ASAN
  __sanitizer_start_switch_fiber(&main_fake_stack, fiber.stack, kStackBytes);
#endif
  jump(main, fiber.context);
#ifdef CPLAB_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(main_fake_stack, nullptr, nullptr);
#endif
  current = -1;
  current_rank_tag() = main_tag;
  restore_eh(main_eh);
}

void RankFibers::State::switch_to_main(Fiber& fiber, bool ending) {
  fiber.tag = current_rank_tag();
  save_eh(fiber.eh);
#ifdef CPLAB_FIBERS_ASAN
  // A fiber that ends passes no fake-stack slot: ASan frees its fake frames.
  __sanitizer_start_switch_fiber(ending ? nullptr : &fiber.fake_stack, main_stack, main_stack_size);
#else
  (void)ending;
#endif
  jump(fiber.context, main);
#ifdef CPLAB_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(fiber.fake_stack, &main_stack, &main_stack_size);
#endif
}

// Parked fibers whose deadline has passed become ready (timed out). With `wait` (nothing is
// ready), the thread first sleeps until the earliest deadline.
void RankFibers::State::expire_deadlines(bool wait) {
  std::optional<Clock::time_point> earliest;
  for (const Fiber& fiber : fibers) {
    if (fiber.run == Run::parked && fiber.deadline && (!earliest || *fiber.deadline < *earliest))
      earliest = fiber.deadline;
  }
  if (!earliest) {
    // Every wait of the rendezvous that depends on another rank has a deadline; one without
    // (a held part being read) waits for a rank that is running. So this is cplab's bug.
    if (wait) throw std::logic_error("rank fibers: every rank is parked and none has a deadline");
    return;
  }
  if (wait) std::this_thread::sleep_until(*earliest);
  const Clock::time_point now = Clock::now();
  for (std::size_t r = 0; r < fibers.size(); ++r) {
    Fiber& fiber = fibers[r];
    if (fiber.run == Run::parked && fiber.deadline && *fiber.deadline <= now) {
      fiber.run = Run::ready;
      fiber.timed_out = true;
      ready.push_back(static_cast<int>(r));
    }
  }
}

RankFibers::RankFibers(int n) : state_(std::make_unique<State>()) {
  state_->fibers.resize(static_cast<std::size_t>(n));
  try {
    for (State::Fiber& fiber : state_->fibers) fiber.stack = stack_pool().take();
  } catch (...) {
    for (State::Fiber& fiber : state_->fibers) {
      if (fiber.stack != nullptr) stack_pool().give_back(fiber.stack);
    }
    throw;
  }
}

RankFibers::~RankFibers() {
  for (State::Fiber& fiber : state_->fibers) stack_pool().give_back(fiber.stack);
}

void RankFibers::run(const std::function<void(int)>& body) {
  State& s = *state_;
  s.owner = std::this_thread::get_id();
  s.body = &body;
  s.done = 0;
  s.ready.clear();
  for (std::size_t r = 0; r < s.fibers.size(); ++r) {
    State::Fiber& fiber = s.fibers[r];
    void* const stack = fiber.stack;
    fiber = State::Fiber{};
    fiber.stack = stack;
    prepare(fiber.context, fiber.stack, kStackBytes, &State::entry);
    s.ready.push_back(static_cast<int>(r));
  }
  State* const outer = std::exchange(State::running, &s);  // a run inside a rank's fiber nests
  const int count = static_cast<int>(s.fibers.size());
  std::uint32_t turns = 0;
  try {
    while (s.done < count) {
      // Deadlines are looked at when nothing is ready, and every so often while ranks keep
      // running (a rank computing forever is not a deadline's to end; one waiting is).
      if (s.ready.empty() || ++turns % 256 == 0) s.expire_deadlines(s.ready.empty());
      const int next = s.ready.front();
      s.ready.pop_front();
      s.switch_to(next);
    }
  } catch (...) {
    State::running = outer;
    throw;
  }
  State::running = outer;
}

bool RankFibers::park(int rank, std::optional<Clock::time_point> deadline) {
  State& s = *state_;
  CPLAB_CHECK(s.current == rank && s.owner == std::this_thread::get_id(),
              "rank fibers: rank {} parks from outside its fiber", rank);
  State::Fiber& fiber = s.fibers[static_cast<std::size_t>(rank)];
  if (fiber.woken) {
    fiber.woken = false;
    return true;
  }
  if (deadline && *deadline <= Clock::now()) return false;
  fiber.run = State::Run::parked;
  fiber.deadline = deadline;
  fiber.timed_out = false;
  s.switch_to_main(fiber, false);
  fiber.deadline.reset();
  return !fiber.timed_out;
}

void RankFibers::wake(int rank) {
  State& s = *state_;
  CPLAB_CHECK(s.owner == std::this_thread::get_id(),
              "rank fibers: rank {} woken from another thread", rank);
  State::Fiber& fiber = s.fibers[static_cast<std::size_t>(rank)];
  if (fiber.run == State::Run::parked) {
    fiber.run = State::Run::ready;
    s.ready.push_back(rank);
  } else if (fiber.run != State::Run::done) {
    fiber.woken = true;
  }
}

}  // namespace detail
}  // namespace cplab::sim
