#pragma once
// The layouts a benchmark of the machinery around a layout runs on (the CLI's processes, the
// search of `check --layout auto`, the JSON writer, the shifted loss, ring attention): asked of the
// registry by kind, never written out, so a benchmark keeps running whatever the registry holds and
// its name (built from the layout's) stays the same while the layout does.
#include <functional>
#include <string>

#include "sim/layout_descriptor.hpp"

namespace cplab::bench {

// The first registered layout, in name order, that `wanted` accepts; throws naming the kind where
// no layout is of it.
std::string first_layout(const char* kind,
                         const std::function<bool(const sim::LayoutDescriptor&)>& wanted);

// A layout that shards rows at every C: it pads any row (no row rule), maps from C and L alone,
// takes BSHD and packed rows and keeps every document where the caller put it.
bool plain_sharding(const sim::LayoutDescriptor& layout);

// A plainly sharding layout whose ranks carry equal causal work (the keys each query of a row sees,
// summed over a rank's tokens) on BSHD rows it pads, at every C: the zigzag that ring attention is
// paired with in production.
bool causally_balanced(const sim::LayoutDescriptor& layout);

// The first layout that shards plainly: for a benchmark of the machinery around a layout.
std::string a_plain_layout();
// The first causally balanced layout: for a benchmark of a causal workload (attention, the
// shifted loss) or of a layout as users mostly run it.
std::string a_balanced_layout();

}  // namespace cplab::bench
