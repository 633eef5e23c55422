#pragma once
// The implementations under test (OpInfo style): name → factory and what it is. `sim` (host twin),
// `gpu` (when built; unavailable without a device, then skipped with the reason), and the mutants:
// deliberately broken variants of sim, each carrying one bug that has shipped in real CP code.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/implementation.hpp"

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

}  // namespace cplab::properties
