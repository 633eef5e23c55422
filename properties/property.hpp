#pragma once
// A property: an invariant every implementation of every layout must keep, checked on one case by
// running the implementation on C ranks and comparing with the reference. Each lives in its own
// file under properties/checks/ and is one line of the property table.
#include <string>
#include <vector>

#include "implementation/implementation.hpp"
#include "properties/case.hpp"
#include "properties/coverage.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

// What a check reports besides pass/fail: coverage tags (RC_TAG in a sweep) and, for a verbose
// replay, notes on what it saw (per-rank work, losses, ...).
struct CheckNotes {
  std::vector<std::string> tags;
  std::vector<std::string> notes;
  std::vector<std::string> options;  // the verb options it exercised (its coverage rules name them)
};

struct PropertyInfo {
  std::string name;       // the invariant, as a name: shard_then_gather_is_identity
  std::string invariant;  // one sentence
  // Checks one case: "" when it holds, else what failed (one line, led by the case's headline).
  // Errors the implementation throws propagate: they are failures of the case too.
  std::string (*check)(const Case& c, Implementation& impl, CheckNotes& notes) = nullptr;
  // The combinations a default sweep must draw for it (coverage.hpp); a job counts them.
  std::vector<CoverageRule> coverage;
  // Why an implementation cannot be checked by it ("" when it can; null: every one can): a verb
  // the implementation does not have. Its jobs are then skipped with the reason, never passed.
  std::string (*unsupported)(const Implementation& impl) = nullptr;
  // Why this case is past a bound cplab states (one line; "" when it is not; null: no such
  // bound). `replay` refuses such a case as bad input before any work; the check itself skips it
  // with a tag, so a sweep's generators drawing one is counted, never failed.
  std::string (*refusal)(const Case& c, Implementation& impl) = nullptr;
};

// The properties of the suite, in the order a sweep and the mutant hunt run them (cheap and
// fundamental first).
const std::vector<PropertyInfo>& property_table();
const PropertyInfo& find_property(const std::string& name);  // throws listing the known names
std::vector<std::string> property_names();

}  // namespace cplab::properties
