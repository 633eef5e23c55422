#pragma once
// Where the target of each local token comes from under the shifted loss (SPEC §6), shared by the
// host (which plans the label exchange) and the device (gpu/kernels/loss_shifted_ce.cu, which picks
// each token's target). The target of global slot g at depth k (SPEC §6.1) is the label at g+k:
// on this rank when the closed-form owner of g+k is this rank, else received from that owner,
// however many ranks away it is.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "layouts/index_math.hpp"

namespace cplab::gpu {

inline constexpr std::int64_t kIgnoreLabel = -100;

// Which local labels every peer needs from this rank, and where each received label lands.
// Both sides order a pair's labels by the global slot of the label, so they agree without talking.
struct TargetExchange {
  std::vector<std::vector<std::int64_t>> send;  // [C]: local offsets whose label peer p needs
  std::vector<std::int64_t> recv_index;         // [ℓ]: position in the peer's message, -1: none
  std::int64_t max_send() const {
    std::int64_t m = 0;
    for (const auto& s : send) m = std::max(m, static_cast<std::int64_t>(s.size()));
    return m;
  }
};

template <typename Map>
TargetExchange plan_target_exchange(const Map& map, std::int64_t rank, std::int64_t padded_len,
                                    std::int64_t depth) {
  const std::int64_t cp = map.cp, local = map.local_len();
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> to(cp), from(cp);  // (slot, k)
  for (std::int64_t k = 0; k < local; ++k) {
    const std::int64_t g = map.global_index(rank, k);
    if (depth < padded_len - g) {
      const index_math::Slot ahead = map.owner(g + depth);
      if (ahead.rank != rank) from[ahead.rank].push_back({g + depth, k});
    }
    if (g >= depth) {
      const index_math::Slot behind = map.owner(g - depth);
      if (behind.rank != rank) to[behind.rank].push_back({g, k});
    }
  }
  TargetExchange plan;
  plan.send.resize(static_cast<std::size_t>(cp));
  plan.recv_index.assign(static_cast<std::size_t>(local), -1);
  for (std::int64_t p = 0; p < cp; ++p) {
    std::sort(to[p].begin(), to[p].end());
    std::sort(from[p].begin(), from[p].end());
    for (const auto& [slot, k] : to[p]) plan.send[p].push_back(k);
    for (std::size_t i = 0; i < from[p].size(); ++i)
      plan.recv_index[from[p][i].second] = static_cast<std::int64_t>(i);
  }
  return plan;
}

// One row's view of the exchanged labels: received[((p·rows + row)·width + i)·2 + {0,1}] is the
// (label, document id) of the i-th label peer p sent for this row.
struct ReceivedLabels {
  const std::int64_t* received;
  std::int64_t rows;
  std::int64_t width;
};

struct Target {
  std::int64_t label;  // kIgnoreLabel when the token has no target
  bool contributes;
};

// The target of local token k of `row` (labels/doc_ids: this rank's row, ℓ entries) and whether it
// contributes: valid, has a target (g+k < L, same document when packed), target not IGNORE.
template <typename Map>
CPLAB_HD Target shifted_target(const Map& map, std::int64_t rank, std::int64_t row, std::int64_t k,
                               std::int64_t padded_len, std::int64_t depth, bool packed, bool valid,
                               const std::int64_t* labels, const std::int32_t* doc_ids,
                               std::int64_t recv_index, ReceivedLabels in) {
  const std::int64_t g = map.global_index(rank, k);
  if (depth >= padded_len - g) return {kIgnoreLabel, false};
  const index_math::Slot next = map.owner(g + depth);
  std::int64_t label, doc;
  if (next.rank == rank) {
    label = labels[next.offset];
    doc = doc_ids[next.offset];
  } else {
    const std::int64_t* entry =
        in.received + ((next.rank * in.rows + row) * in.width + recv_index) * 2;
    label = entry[0];
    doc = entry[1];
  }
  // Row padding (document 0) belongs to no document, as in the reference and the twin.
  if (packed && (doc_ids[k] == 0 || doc != doc_ids[k])) return {kIgnoreLabel, false};
  return {label, valid && label != kIgnoreLabel};
}

}  // namespace cplab::gpu
