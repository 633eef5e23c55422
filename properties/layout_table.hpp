#pragma once
// One entry per layout (OpInfo style): its reference plan, its closed-form index map, what its
// generators may draw, and the load-balance rule SPEC §8 states for it. Properties and generators
// iterate this table; adding a layout is one entry here, never a switch in every property.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reference/plan.hpp"
#include "reference/types/layout_spec.hpp"
#include "reference/types/shard_plan.hpp"
#include "sim/index_math.hpp"

namespace cplab::properties {

// What SPEC §8 promises about the causal work of the ranks.
enum class BalanceRule : std::uint8_t {
  none,                // identity: one rank
  reported,            // contiguous: unbalanced by design; the imbalance is reported, not bounded
  equal_on_full_rows,  // head-tail: equal work on a causal row without padding
  equal_per_document,  // thd: equal work inside every document without padding
  area_bound,          // magi: max rank area <= total/C + max chunk area
};

// The closed-form map of one row, built from the layout parameters a ShardLayout records (thd's
// cu_seqlens_padded, magi's chunk assignment) and owning the arrays it points into.
struct ClosedFormMap {
  std::int64_t local_len = 0;
  std::function<std::int64_t(std::int64_t rank, std::int64_t k)> global_index;
  std::function<index_math::Slot(std::int64_t g)> owner;
};

// Parameters of one row as a ShardLayout (implementation) or a RowPlan (reference) records them.
struct MapParams {
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;
  std::vector<std::int64_t> cu_seqlens_padded;  // thd
  std::vector<std::int64_t> magi_rank_chunks;   // magi: rank-major, each rank's chunks ascending
  std::int64_t chunk_size = 0;                  // magi
};

struct LayoutEntry {
  std::string name;
  const reference::LayoutInfo* reference = nullptr;  // plan by construction
  ClosedFormMap (*closed_form)(const MapParams&) = nullptr;
  // What the generators may draw for it.
  bool cp_off = false;             // C is always 1 (identity: CP off)
  bool bshd_rows = true;           // takes BSHD rows
  bool packed_rows = true;         // takes packed rows
  bool uses_pad_multiple = false;  // m matters (contiguous)
  bool uses_chunk_size = false;    // K matters (magi)
  bool local_documents = false;    // ranks hold whole local documents with local cu_seqlens (thd)
  BalanceRule balance = BalanceRule::none;
  // The multiple D the layout pads a stream of this spec to (C > 1), for "lengths near multiples".
  std::int64_t (*pad_unit)(const LayoutSpec&) = nullptr;
};

// Every layout, in the reference registry's order. Each entry was validated when it registered:
// it names a reference layout, has a closed form and a pad unit, takes some row kind, and the
// reference and every reference layout have an entry.
const std::vector<LayoutEntry>& layout_table();
const LayoutEntry& layout_entry(const std::string& name);  // throws listing the known names
std::vector<std::string> layout_table_names();

// Params of a reference row (for the closed form checked against the construction).
MapParams map_params(const RowPlan& row, const LayoutSpec& spec);

}  // namespace cplab::properties
