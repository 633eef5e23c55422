#include "layouts/cost_model.hpp"

#include <algorithm>

#include "comm/wire_bytes.hpp"
#include "layouts/layout_map.hpp"

namespace cplab::sim {
namespace {

// Real keys a real query at slot g sees: the real tokens of its document from the document's
// first slot (where its real tokens start) up to g. A BSHD row is one document from slot 0.
std::vector<std::int64_t> visible_keys(const RowStream& stream, const StreamSlots& slots) {
  std::vector<std::int64_t> seen(slots.real.size(), 0);
  for (std::size_t g = 0; g < seen.size(); ++g) {
    if (!slots.real[g]) continue;
    const std::int64_t start =
        stream.packed ? stream.doc_bounds[static_cast<std::size_t>(slots.doc_ids[g] - 1)] : 0;
    seen[g] = static_cast<std::int64_t>(g) - start + 1;
  }
  return seen;
}

}  // namespace

std::vector<RankCost> rank_costs(const LayoutSpec& spec, const MicrobatchRows& rows,
                                 const CostShapes& shapes, const PartitionRules& rules) {
  const RowStream stream = row_stream(spec, rows, rules);
  const StreamSlots slots = stream_slots(stream);
  const std::vector<std::int64_t> seen = visible_keys(stream, slots);
  const auto cp = static_cast<std::uint64_t>(spec.cp);
  const auto b = static_cast<std::uint64_t>(rows.rows);
  const std::int64_t len = stream.padded_len / spec.cp;
  const auto ell = static_cast<std::uint64_t>(len);
  const auto elem = static_cast<std::uint64_t>(shapes.element_bytes);
  const auto features = static_cast<std::uint64_t>(shapes.token_elements);
  const auto dim = static_cast<std::uint64_t>(shapes.head_dim);

  std::vector<std::vector<std::int64_t>> index;
  for (std::int64_t r = 0; r < spec.cp; ++r) index.push_back(local_index(stream, r, rules));
  const LayoutMap map = stream_map(stream);

  std::vector<RankCost> costs(static_cast<std::size_t>(spec.cp));
  for (std::int64_t r = 0; r < spec.cp; ++r) {
    RankCost& cost = costs[r];
    cost.rank = r;
    for (std::int64_t g : index[r]) {
      cost.causal_work += seen[g];
      cost.valid_tokens += slots.real[g];
    }
    cost.causal_work *= rows.rows;
    cost.valid_tokens *= rows.rows;
    // The owner of every token's target slot (k ahead) sends its (label, document) when it is
    // another rank.
    for (std::int64_t g : index[r]) {
      if (g + shapes.loss_depth >= stream.padded_len) continue;
      const index_math::Slot owner = map.owner(g + shapes.loss_depth);
      if (owner.rank != r) costs[owner.rank].bytes.loss_exchange += 2 * 8 * b;
    }
  }
  const std::uint64_t index_maps = wire_bytes::all_gather(2 * b * ell, 8, cp);
  for (RankCost& cost : costs) {
    VerbBytes& v = cost.bytes;
    v.gather_token_tensor = index_maps + wire_bytes::all_gather(b * ell * features * elem, 1, cp);
    v.gather_token_tensor_backward =
        index_maps + wire_bytes::reduce_scatter(b * ell * features, elem, cp);
    v.gather_tokens = b * wire_bytes::all_gather(ell * features, elem, cp);
    v.gather_tokens_backward = b * wire_bytes::reduce_scatter(ell * features, elem, cp);
    v.loss_count = wire_bytes::all_reduce(1, 8, cp);
    v.attention =
        b * (wire_bytes::all_gather(3 * ell, 8, cp) + 2 * wire_bytes::all_gather(ell * dim, 4, cp) +
             2 * wire_bytes::reduce_scatter(ell * dim, 4, cp));
  }
  return costs;
}

double work_imbalance(const std::vector<RankCost>& costs) {
  std::int64_t total = 0, most = 0;
  for (const RankCost& cost : costs) {
    total += cost.causal_work;
    most = std::max(most, cost.causal_work);
  }
  if (total == 0) return 1.0;
  return static_cast<double>(most) * static_cast<double>(costs.size()) / static_cast<double>(total);
}

}  // namespace cplab::sim
