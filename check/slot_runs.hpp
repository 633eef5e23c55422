#pragma once
// Differing slots of one key of one rank's row, grouped so that one wrong chunk is one line: slots
// next to each other whose expected global slots run on by one and whose held slots run on by the
// same step (+1, or -1 for a reversed chunk) are one run.
#include <cstdint>
#include <string>
#include <vector>

#include "check/shard_check.hpp"

namespace cplab::check {

struct SlotDiff {
  std::int64_t k = 0;                    // local slot (gathered: position in the gathered row)
  std::int64_t g = 0;                    // global slot it should hold
  bool pad = false;                      // g is a slot the layout added
  std::int64_t held = -1;                // global slot whose value it holds; -1 none, -2 several
  std::vector<double> expected, actual;  // the token's elements
};

struct RunContext {
  std::int64_t rank = -1;  // -1: gathered
  std::string key;
  std::int64_t row = 0;
  bool show_row = false;  // B > 1
  std::string pad_rule;   // what the pad convention puts in this key's added slots ("pad id 0")
};

std::vector<Difference> group_runs(const RunContext& where, const std::vector<SlotDiff>& slots);

// "[4, 8)" or "5"; "a, b, c, …" for up to `shown` values.
std::string range_text(std::int64_t begin, std::int64_t end);
std::string values_text(const std::vector<double>& values, std::size_t shown = 6);

}  // namespace cplab::check
