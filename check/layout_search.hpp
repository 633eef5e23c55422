#pragma once
// `--layout auto`: which registered layout (and which of its options) explains a set of shards.
// The engine of `cplab check`, shared by every front end that checks shards.
#include <cstdint>
#include <string>
#include <vector>

#include "check/shard_check.hpp"
#include "core/layout_option.hpp"

namespace cplab::check {

// The options the caller fixed (at their values in `given`); every other option of a layout is
// searched over the candidates its declaration lists for shards of the length the ranks hold.
using FixedOptions = std::vector<const layouts::LayoutOption*>;

struct Verdict {
  Outcome outcome;
  bool automatic = false;
  std::int64_t candidates = 1;    // layouts with option values considered
  std::int64_t planned = 1;       // of them planned by the reference and checked in full
  std::vector<std::string> also;  // other layouts (and options) that explain the shards as well
};

// What the layout looks like to a reader: its name, C and the options that differ from defaults.
std::string layout_brief(LayoutSpec spec);

// Every registered layout with the values of the options it reads that could have made the
// shards; candidates are ranked at sampled slots through their closed-form maps and planned and
// checked in full in that order until one explains the shards (at most three groups of
// candidates the samples cannot tell apart); the best score wins (the first registered on ties).
// `given` holds C, the options the caller fixed and the magi options already applied. Throws when
// no layout plans the batch into shards of the length the ranks hold.
Verdict find_layout(const LayoutSpec& given, const FixedOptions& fixed, const Batch& batch,
                    const std::vector<io::TensorFile>& shards, const Conventions& conventions);

}  // namespace cplab::check
