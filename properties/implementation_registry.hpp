#pragma once
// The implementations under test (OpInfo style): name → factory and what it is. `sim` (host twin),
// `gpu` (when built; unavailable without a device, then skipped with the reason), and the mutants:
// deliberately broken variants of sim, each carrying one bug that has shipped in real CP code.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "implementation/implementation.hpp"

namespace cplab::properties {

struct ImplementationInfo {
  std::string name;
  std::string summary;  // what it is; for a mutant, the bug it carries and where it shipped
  bool mutant = false;
  bool in_default_sweep = true;  // run when a sweep names no implementations (mutants never are)
  // Mutants: the layouts whose code path carries the bug (the mutant hunt runs only these);
  // empty: every layout.
  std::vector<std::string> layouts = {};
  std::function<std::unique_ptr<Implementation>()> make = nullptr;
  // Its C ranks are the processes of an MPI job (sim-mpi, "<mutant>-mpi"): run under
  // `mpirun -np C cplab ...`; a job of it runs this process's rank (rank_processes.hpp).
  bool ranks_as_processes = false;
  // Mutants: the properties whose invariant the bug breaks in the first place; the hunt runs them
  // first, then the rest in table order (every property still runs against it). Empty: table
  // order.
  std::vector<std::string> checked_first_by = {};
};

// sim, gpu, then the mutants in name order. Entries are validated as they register: a unique
// snake/kebab name, a factory, and layouts the layout table knows.
const std::vector<ImplementationInfo>& implementation_registry();
const ImplementationInfo& find_implementation(const std::string& name);  // throws listing the names
std::vector<std::string> implementation_names(bool mutants);  // the non-mutants, or the mutants

// "" when the implementation can run here; else why not (it is then skipped, never passed).
std::string unavailable_reason(const ImplementationInfo& info);

// The GPU entries: `gpu` (C virtual ranks on one device), `gpu-nccl` (one device per rank) and
// `gpu-host` (kernels on the device, collectives staged through the host comm). gpu/'s factory
// when the build has CUDA (gpu_entry_cuda.cpp); else entries that are never available and say why
// (gpu_entry_none.cpp), so that `--impl gpu` is reported skipped, not unknown.
std::vector<ImplementationInfo> gpu_entries();

// "X-mpi" for a registered sim or mutant X: X with its ranks as MPI processes
// (process_variants.cpp). sim-mpi is registered; the mutants' variants are made on first use.
// nullptr for other names.
ImplementationInfo process_variant_of(const ImplementationInfo& base);
const ImplementationInfo* find_process_variant(const std::string& name);

}  // namespace cplab::properties
