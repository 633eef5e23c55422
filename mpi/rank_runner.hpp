#pragma once
// C ranks as the processes of an MPI job: this process runs its own rank's share, and every
// process ends with every rank's result, so that code written for C ranks in one process (the
// property checks) runs unchanged, and identically, on every process.
//
// World ranks [0, C) compute; ranks beyond C (a world larger than the case) only take part in the
// exchange of results. Every process must call these functions the same number of times, in the
// same order (the property code is the same on every process, so it does).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace cplab::mpi {

// fn(comm, rank) on this process's rank when it is below cp; its result travels as bytes. Returns
// every rank's bytes, by rank. When any rank throws, every process throws the same cplab::Error:
// the first rank's own failure, else the first rank that was stopped (by a peer's failure or the
// timeout); a rank gone for good is named within the timeout.
std::vector<std::string> run_ranks_as_processes(
    int cp, std::chrono::milliseconds timeout,
    const std::function<std::string(Comm& comm, int rank)>& fn);

// Every process's `mine`, by world rank (an all-gather of byte strings), within the timeout.
std::vector<std::string> exchange_with_all(const std::string& mine,
                                           std::chrono::milliseconds timeout);

}  // namespace cplab::mpi
