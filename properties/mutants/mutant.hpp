#pragma once
// What every mutant shares: it is `sim` with exactly one protected step overridden (a bug that has
// shipped in real CP code), under its own name.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/layout_table.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties::mutants {

class Mutant : public sim::SimImplementation {
 public:
  explicit Mutant(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }

 protected:
  // `labels[:, k:]` on the local shard: each token takes the label `depth` local tokens ahead
  // (same document by crosses_document), the last `depth` local tokens none. The shift of the
  // shard after the split, the bug of the loss_mutants and mtp_mutants that shift locally.
  std::vector<std::vector<sim::Target>> shifted_locally(const ShardLayout& layout,
                                                        const Tensor& labels,
                                                        std::int64_t depth) const;

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

// The registry entry of a shared mutant class M whose bug lies on some layouts' code paths only:
// run on the layouts whose property entry names it (LayoutEntry::carries_mutants), at least one.
template <typename M>
ImplementationInfo on_claiming_layouts(std::string name, std::string bug) {
  std::vector<std::string> layouts;
  for (const LayoutEntry& layout : layout_table()) {
    const auto& claimed = layout.carries_mutants;
    if (std::find(claimed.begin(), claimed.end(), name) != claimed.end())
      layouts.push_back(layout.name);
  }
  CPLAB_CHECK(!layouts.empty(),
              "mutant '{}' runs on the layouts that carry it, and no layout's property entry "
              "(carries_mutants) names it",
              name);
  return entry<M>(std::move(name), std::move(bug), std::move(layouts));
}

// Rank `rank`'s piece of a per-document head-tail laid out document-major, the bug torch and
// TransformerEngine ports have shipped: every document [bounds[i], bounds[i+1]) cut into 2C
// chunks, each rank's head and tail chunk listed document by document (document i: rank 0's two,
// rank 1's two, ...), and that flat list cut into C equal contiguous pieces. Every slot is still
// held once, but the early documents land on the first ranks.
inline std::vector<std::int64_t> document_major_piece(const std::vector<std::int64_t>& bounds,
                                                      std::int64_t cp, std::int64_t rank) {
  std::vector<std::int64_t> flat;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::int64_t start = bounds[i], chunk = (bounds[i + 1] - start) / (2 * cp);
    for (std::int64_t p = 0; p < cp; ++p) {
      for (std::int64_t k = 0; k < chunk; ++k) flat.push_back(start + p * chunk + k);
      for (std::int64_t k = 0; k < chunk; ++k) flat.push_back(start + (2 * cp - 1 - p) * chunk + k);
    }
  }
  const std::int64_t local = static_cast<std::int64_t>(flat.size()) / cp;
  return {flat.begin() + rank * local, flat.begin() + (rank + 1) * local};
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
std::vector<ImplementationInfo> rare_case_mutants();
std::vector<ImplementationInfo> ulysses_mutants();
std::vector<ImplementationInfo> attention_mutants();
std::vector<ImplementationInfo> mask_mutants();
std::vector<ImplementationInfo> mtp_mutants();
// A layout's own mutants (bugs of that layout alone) live with its property entry, in
// properties/layouts/ID_mutants.cpp, and reach the registry through LayoutEntry::own_mutants.

}  // namespace cplab::properties::mutants
