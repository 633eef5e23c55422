#include "cli/stop_signals.hpp"

#include <signal.h>

#include <atomic>

#include "properties/sweep.hpp"

namespace cplab::cli {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM};
constexpr int kCount = 2;

std::atomic<int> g_first_caught{0};
std::atomic<unsigned> g_caught_mask{0};  // bit i: kStopSignals[i] was caught
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<unsigned>::is_always_lock_free,
              "signal handlers need lock-free flags");

// The dispositions the process was started with (a shell starts background jobs with SIGINT
// ignored): what release_stop_signals gives back. Written once, by the first install, while the
// process has one thread.
struct sigaction g_inherited[kCount];
bool g_inherited_saved = false;

int index_of(int signal_number) { return signal_number == kStopSignals[0] ? 0 : 1; }

extern "C" void on_stop_signal(int signal_number) {
  // Atomic stores only: async-signal-safe. The first signal is the one reported.
  int none = 0;
  g_first_caught.compare_exchange_strong(none, signal_number);
  g_caught_mask.fetch_or(1u << index_of(signal_number));
  properties::request_sweep_stop(signal_number);
}

// Runs from .preinit_array, before the shared libraries' constructors, with nothing but the
// loader's relocations done: sigaction is a system call, and the flags are constant-initialised,
// so nothing here needs a constructor to have run.
void catch_before_constructors(int, char**, char**) { catch_stop_signals(); }

}  // namespace

// The loader calls the entries of the executable's .preinit_array before the initialisers of
// any shared library (ELF gABI, "Initialization and Termination Functions").
__attribute__((section(".preinit_array"),
               used)) void (*const kCatchBeforeConstructors)(int, char**,
                                                             char**) = catch_before_constructors;

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (int i = 0; i < kCount; ++i) {
    sigaction(kStopSignals[i], &action, g_inherited_saved ? nullptr : &g_inherited[i]);
  }
  g_inherited_saved = true;
}

int caught_stop_signal() { return g_first_caught.load(); }

void release_stop_signals() {
  for (int i = 0; i < kCount; ++i) {
    struct sigaction current {};
    if (sigaction(kStopSignals[i], nullptr, &current) != 0) continue;
    // Ours, or the default that SA_RESETHAND put back when ours fired; anything else was set
    // since by someone who meant it (the MPI session's SIGTERM handler).
    const bool reset_by_us =
        current.sa_handler == SIG_DFL && (g_caught_mask.load() & (1u << i)) != 0;
    if (current.sa_handler != on_stop_signal && !reset_by_us) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(kStopSignals[i], g_inherited_saved ? &g_inherited[i] : &fallback, nullptr);
  }
  // A signal caught before the release takes the effect it would have had without the handler.
  if (const int caught = caught_stop_signal(); caught != 0) ::raise(caught);
}

}  // namespace cplab::cli
