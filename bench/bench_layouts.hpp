#pragma once
// The layouts a benchmark of the machinery around a layout runs on (the CLI's processes, the
// search of `check --layout auto`, the JSON writer, the shifted loss, ring attention): asked of the
// registry by kind, never written out, so a benchmark keeps running whatever the registry holds and
// its name (built from the layout's) stays the same while the layout does.
#include <string>

#include "layouts/layout_descriptor.hpp"
#include "layouts/layout_kinds.hpp"

namespace cplab::bench {

// By kind, from the registry (layouts/layout_kinds.hpp): first_layout, plain_sharding,
// a_plain_layout.
using sim::a_plain_layout;
using sim::first_layout;
using sim::plain_sharding;

// A plainly sharding layout whose ranks carry equal causal work (the keys each query of a row sees,
// summed over a rank's tokens) on BSHD rows it pads, at every C: the zigzag that ring attention is
// paired with in production.
bool causally_balanced(const sim::LayoutDescriptor& layout);

// The first causally balanced layout: for a benchmark of a causal workload (attention, the
// shifted loss) or of a layout as users mostly run it.
std::string a_balanced_layout();

}  // namespace cplab::bench
