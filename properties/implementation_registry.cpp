// The implementation registry: sim, gpu, and the mutants (properties/mutants/).
#include "properties/implementation_registry.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "properties/layout_table.hpp"
#include "properties/mutants/mutant.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties {

namespace {

ImplementationInfo sim_entry() {
  return {.name = "sim", .summary = "the CPU twin: host loops on C ThreadComm ranks", .make = [] {
            return std::make_unique<sim::SimImplementation>();
          }};
}

std::vector<ImplementationInfo> registered(std::vector<ImplementationInfo> entries) {
  std::set<std::string> names;
  const std::vector<std::string> layouts = layout_table_names();
  for (const ImplementationInfo& info : entries) {
    CPLAB_CHECK(!info.name.empty() && info.make != nullptr,
                "an implementation registers without a name or factory");
    // Names appear in replay commands and report file names: lowercase, digits, '_' and '-'.
    CPLAB_CHECK(
        info.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos,
        "implementation name '{}' must be lowercase letters, digits, '_' or '-'", info.name);
    CPLAB_CHECK(names.insert(info.name).second, "implementation '{}' registered twice", info.name);
    for (const std::string& layout : info.layouts) {
      CPLAB_CHECK(std::find(layouts.begin(), layouts.end(), layout) != layouts.end(),
                  "implementation '{}' names unknown layout '{}'", info.name, layout);
    }
  }
  // A layout that says it carries a mutant names one that registers (a typo would hide the
  // mutant from that layout's hunt).
  for (const LayoutEntry& layout : layout_table()) {
    for (const std::string& mutant : layout.carries_mutants) {
      CPLAB_CHECK(names.count(mutant) != 0,
                  "layout '{}' carries mutant '{}', which no mutant file registers", layout.name,
                  mutant);
    }
  }
  return entries;
}

std::vector<ImplementationInfo> all_entries() {
  std::vector<ImplementationInfo> entries = {sim_entry(), process_variant_of(sim_entry())};
  for (ImplementationInfo& gpu : gpu_entries()) entries.push_back(std::move(gpu));
  std::vector<ImplementationInfo> found;
  for (auto&& list :
       {mutants::loss_mutants(), mutants::gather_mutants(), mutants::pad_mutants(),
        mutants::rare_case_mutants(), mutants::ulysses_mutants(), mutants::attention_mutants(),
        mutants::mask_mutants(), mutants::mtp_mutants()}) {
    found.insert(found.end(), list.begin(), list.end());
  }
  // Each layout's own mutants (properties/layouts/ID_mutants.cpp), asked through its entry.
  for (const LayoutEntry& layout : layout_table()) {
    if (layout.own_mutants == nullptr) continue;
    for (ImplementationInfo& info : layout.own_mutants()) {
      CPLAB_CHECK(info.mutant && info.layouts == std::vector<std::string>{layout.name},
                  "layout '{}' lists mutant '{}' as its own, which must be a mutant of it alone",
                  layout.name, info.name);
      found.push_back(std::move(info));
    }
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  entries.insert(entries.end(), found.begin(), found.end());
  return entries;
}

}  // namespace

const std::vector<ImplementationInfo>& implementation_registry() {
  static const std::vector<ImplementationInfo> registry = registered(all_entries());
  return registry;
}

const ImplementationInfo& find_implementation(const std::string& name) {
  for (const ImplementationInfo& info : implementation_registry()) {
    if (info.name == name) return info;
  }
  if (const ImplementationInfo* variant = find_process_variant(name)) return *variant;
  std::vector<std::string> names;
  for (const ImplementationInfo& info : implementation_registry()) names.push_back(info.name);
  CPLAB_FAIL("unknown implementation '{}'; known: {}", name, fmt::join(names, ", "));
}

std::vector<std::string> implementation_names(bool mutants) {
  std::vector<std::string> names;
  for (const ImplementationInfo& info : implementation_registry()) {
    if (info.mutant == mutants) names.push_back(info.name);
  }
  return names;
}

std::string unavailable_reason(const ImplementationInfo& info) {
  const std::unique_ptr<Implementation> impl = info.make();
  if (impl->available()) return {};
  const std::string why = impl->why_unavailable();
  return why.empty() ? "unavailable here (no reason given)" : why;
}

}  // namespace cplab::properties
