#pragma once
// One entry per layout (OpInfo style): its reference plan, its descriptor (closed-form map and the
// rest of the layout as data), what its generators may draw, and the load-balance rule SPEC §8
// states for it. Properties and generators iterate this table; adding a layout is one entry here,
// never a switch in every property.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/layout_map.hpp"
#include "reference/plan.hpp"

namespace cplab::properties {

struct Case;
struct ImplementationInfo;

// What one row of a case gives the load-balance rule of its layout (SPEC §8): the causal work of
// every rank on the implementation's partition and the keys each slot's query sees.
struct BalanceFacts {
  const LayoutSpec& spec;
  const RowPlan& row;                                   // the reference's row
  const std::vector<std::vector<std::int64_t>>& index;  // every rank's index map
  const std::vector<std::int64_t>& visible;             // keys each slot's query sees
  const std::vector<std::int64_t>& work;                // causal work per rank
  std::int64_t total = 0;                               // Σ work
  std::int64_t largest = 0;                             // max work
  std::vector<std::string>& tags;                       // coverage tags the rule may add
};

// What one schedule of a row gives the layout's attention balance promise (SPEC §13.4).
struct ScheduleBalanceFacts {
  const LayoutSpec& spec;
  const RowPlan& row;  // the reference's row the schedule was built from
  const sim::AttentionSchedule& schedule;
  std::vector<std::string>& tags;  // coverage tags the rule may add
};

// "" when every step of the schedule gives every rank the same work, else which step does not.
std::string steps_of_unequal_work(const sim::AttentionSchedule& schedule);

struct LayoutEntry {
  std::string name;
  const reference::LayoutInfo* reference = nullptr;   // plan by construction (filled by name)
  const sim::LayoutDescriptor* descriptor = nullptr;  // the layout as data (filled by name)
  // What the generators may draw for it: the rows it takes, CP off, its pad unit and whether it
  // keeps local documents are its descriptor's (read there, never copied here).
  // The layout's load-balance promise (SPEC §8): a failure message, or empty. Required.
  std::string (*balance)(const BalanceFacts&) = nullptr;
  // How the generators draw the layout's own options (declared in layouts/ID.cpp; nullptr: at
  // their defaults). draw_options runs inside a generator after C is drawn (it may draw with
  // *gen); padded_row: the case asks for a BSHD row the layout pads. shrink_options lists simpler
  // options of the same C, simplest first; options_at_cp lists options valid at a smaller C (the
  // C shrink; nullptr: the options as they are).
  void (*draw_options)(LayoutSpec& spec, bool padded_row) = nullptr;
  std::vector<LayoutSpec> (*shrink_options)(const LayoutSpec& spec) = nullptr;
  std::vector<LayoutSpec> (*options_at_cp)(const LayoutSpec& spec, std::int64_t cp) = nullptr;
  // Draws the layout's options that depend on the rows (K=auto) once C and the rows are drawn
  // (inside a generator: it may draw); nullptr: none. gen_case resolves derived options after.
  void (*draw_case_options)(Case& c) = nullptr;
  // Layouts with whole local documents (required there): how many of a local document's `real`
  // tokens rank `rank` holds when the document occupies `padded` stream slots (C > 1; SPEC §3).
  std::int64_t (*local_document_valid)(std::int64_t real, std::int64_t padded, std::int64_t cp,
                                       std::int64_t rank) = nullptr;
  // The layout's promise for the critical path of its attention schedules (SPEC §13.4): a
  // failure message, or empty; nullptr: reported, not bounded.
  std::string (*schedule_balance)(const ScheduleBalanceFacts&) = nullptr;
  // The shared mutants (properties/mutants/, registered with on_claiming_layouts) whose bug lies
  // on this layout's code path: the mutant hunt runs each only on the layouts that name it here.
  std::vector<std::string> carries_mutants = {};
  // The layout's own mutants, bugs of its code alone (properties/layouts/ID_mutants.cpp, each
  // entry naming this layout); nullptr: none.
  std::vector<ImplementationInfo> (*own_mutants)() = nullptr;
};

// Every layout, in the reference registry's order. Each entry was validated when it registered:
// it names a reference layout and a layout descriptor, has a balance rule, and every reference
// layout and every descriptor has an entry.
const std::vector<LayoutEntry>& layout_table();
const LayoutEntry& layout_entry(const std::string& name);  // throws listing the known names
std::vector<std::string> layout_table_names();

// The closed-form map of a reference row, from the parameters its construction recorded.
sim::LayoutMap reference_map(const LayoutEntry& entry, const RowPlan& row);

}  // namespace cplab::properties
