#include "mpi/session.hpp"

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "mpi/transport.hpp"

namespace cplab::mpi {
namespace {

bool g_started = false, g_finished = false, g_lost = false;
std::string g_lost_reason;
World g_world;

// Two buffers, so that the signal handler never reads the one being written.
char g_activity[2][512] = {{0}, {0}};
std::atomic<int> g_activity_index{0};

int env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != nullptr && *end == '\0' && value > 0 && value < (1 << 24) ? static_cast<int>(value)
                                                                          : 0;
}

void write_all(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// The launcher sends SIGTERM to the survivors when one process of the job dies: say so, and what
// this rank was doing, instead of vanishing silently.
extern "C" void on_terminate(int) {
  static char line[768];
  const char* doing = g_activity[g_activity_index.load(std::memory_order_relaxed)];
  std::snprintf(line, sizeof line,
                "cplab: error: rank %d/%d: stopped by the launcher (SIGTERM), most likely because "
                "another process of this job ended%s%s\n",
                g_world.rank, g_world.size, *doing ? "; this rank was " : "", doing);
  write_all(line);
  ::_exit(1);
}

void at_exit() { finish(); }

}  // namespace

int launcher_world_size() {
  if (int n = env_int("OMPI_COMM_WORLD_SIZE")) return n;
  if (int n = env_int("PMI_SIZE")) return n;
  if (std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr) {
    if (int n = env_int("SLURM_NTASKS")) return n;
  }
  return 1;
}

World world() {
  if (g_started) return g_world;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    CPLAB_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS,
                "MPI_Init_thread failed");
  }
  // Errors come back as codes (each call is checked), never as an abort from inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  g_started = true;
  detail::start_channel();  // while every process is here
  std::atexit(at_exit);
  if (g_world.size > 1) std::signal(SIGTERM, on_terminate);
  return g_world;
}

bool started() { return g_started; }

void mark_lost(const std::string& why) {
  if (g_lost) return;
  g_lost = true;
  g_lost_reason = why;
  // The moment this process learns that a peer is gone: it says so, once. Every process but rank
  // 0 prints nothing else (rank 0 writes the reports), and would otherwise end in silence.
  std::string line = "cplab: error: " + why;
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';  // one line, whatever a peer sent
  }
  line += '\n';
  write_all(line.c_str());
}
bool lost() { return g_lost; }
const std::string& lost_reason() { return g_lost_reason; }

void set_activity(const std::string& text) {
  const int next = 1 - g_activity_index.load(std::memory_order_relaxed);
  std::snprintf(g_activity[next], sizeof g_activity[next], "%s", text.c_str());
  g_activity_index.store(next, std::memory_order_relaxed);
}

void finish() {
  if (!g_started || g_finished) return;
  g_finished = true;
  int done = 0;
  MPI_Finalized(&done);
  if (done) return;
  // MPI_Finalize would wait for a lost peer forever: leave without it (the launcher reports it).
  if (g_lost) return;
  detail::drain_sends(10000);
  // A communicator still being set up crashes MPI_Finalize (Open MPI tears it down half-built).
  if (!detail::settle_channel(10000)) return;
  std::signal(SIGTERM, SIG_DFL);
  MPI_Finalize();
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace cplab::mpi
