#pragma once
// What every mutant shares: it is `sim` with exactly one protected step overridden (a bug that has
// shipped in real CP code), under its own name.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "properties/implementation_registry.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties::mutants {

class Mutant : public sim::SimImplementation {
 public:
  explicit Mutant(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

// The registry entry of mutant class M.
template <typename M>
ImplementationInfo entry(std::string name, std::string bug, std::vector<std::string> layouts = {}) {
  return ImplementationInfo{.name = name,
                            .summary = std::move(bug),
                            .mutant = true,
                            .in_default_sweep = false,
                            .layouts = std::move(layouts),
                            .make = [name] { return std::make_unique<M>(name); }};
}

// The entries with `property` named as the one that checks their bug first (the hunt's order).
inline std::vector<ImplementationInfo> checked_first_by(const std::string& property,
                                                        std::vector<ImplementationInfo> entries) {
  for (ImplementationInfo& info : entries) info.checked_first_by = {property};
  return entries;
}

// Each file of mutants lists its entries.
std::vector<ImplementationInfo> loss_mutants();
std::vector<ImplementationInfo> gather_mutants();
std::vector<ImplementationInfo> pad_mutants();
std::vector<ImplementationInfo> partition_mutants();
std::vector<ImplementationInfo> rare_case_mutants();
std::vector<ImplementationInfo> ulysses_mutants();
std::vector<ImplementationInfo> attention_mutants();
// A layout's own mutants (bugs of that layout alone) live with its property entry, in
// properties/layouts/ID_mutants.cpp.
std::vector<ImplementationInfo> llama3_varlen_mutants();
std::vector<ImplementationInfo> per_doc_head_tail_mutants();
std::vector<ImplementationInfo> ptrr_mutants();
std::vector<ImplementationInfo> usp_mutants();

}  // namespace cplab::properties::mutants
