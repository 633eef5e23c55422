#pragma once
// SIGINT and SIGTERM, from the first statement of main() on. `cplab sweep` promises that a stop
// signal gives its report (marked "complete": false) and the exit status 128 + the signal, so a
// signal must be caught from the moment the process can do anything about it, not only once the
// sweep's slow start (libtorch and CUDA, the first report with the checkout's commit) is over.
//
// Before main(): the dynamic loader maps and relocates the shared libraries and runs their
// constructors (libtorch's and CUDA's take most of a second). A signal in that time has its
// default effect: the process ends by the signal, before it has written or replaced anything, so
// a report left in --out by an earlier run is still there, as that run left it (the sweep
// replaces it before its own slow steps; see sweep_command.cpp). To narrow that window the
// handler is installed once more, earlier: from the executable's .preinit_array, which the
// loader runs before any shared library's constructor (only the mapping and relocation come
// before it).
//
// Commands other than sweep do not stop between steps: they give the signals their default
// effect back (release_stop_signals) as soon as they know they run, and a signal that came in
// the meantime then takes that effect.
namespace cplab::cli {

// Installs the recording handler for SIGINT and SIGTERM (SA_RESETHAND: a second signal has the
// default effect, for a process that must die; SA_RESTART: reads and writes under way go on).
// The handler records the signal and asks the sweep to stop (properties::request_sweep_stop).
void catch_stop_signals();

// The first stop signal caught so far, 0 when none.
int caught_stop_signal();

// Gives SIGINT and SIGTERM their default effect again where the handler is still ours (another
// one, such as the MPI session's SIGTERM handler, is left in place); a signal caught before then
// is raised again, so it ends the process as it would have without the handler.
void release_stop_signals();

}  // namespace cplab::cli
