#pragma once
// The shifted loss's target selection as the device runs it (gpu/host/shifted_target.hpp),
// simulated for every rank of one row on the host: what shifted_target_test.cpp and the layouts'
// own tests (layouts/ID_test.cpp) compare with the targets read off the reference's global stream.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"
#include "gpu/host/shifted_target.hpp"
#include "gpu/kernels/layout_map.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/layout_map.hpp"

namespace cplab::gpu::shifted_target_fixtures {

struct RankTargets {
  std::vector<std::int64_t> label;  // kIgnoreLabel where the token does not contribute
  std::vector<bool> contributes;
};

// Every rank's targets at `depth` for one row whose global labels are `labels` (length L).
inline std::vector<RankTargets> simulate(const LayoutSpec& spec, const RowPlan& row,
                                         const std::vector<std::int64_t>& labels,
                                         std::int64_t depth = 1) {
  // The one map, from the parameters the reference's construction recorded.
  const sim::LayoutMap layout_map(sim::layout_descriptor(spec.layout), row.cp, row.padded_len,
                                  row.map);
  const MapView map = layout_map.view();
  const std::int64_t cp = row.cp, local = row.local_len();
  std::vector<TargetExchange> plans;
  std::int64_t width = 0;
  for (std::int64_t r = 0; r < cp; ++r) {
    plans.push_back(
        visit_map(map, [&](auto m) { return plan_target_exchange(m, r, row.padded_len, depth); }));
    width = std::max(width, plans.back().max_send());
  }
  // What rank p puts in its all-to-all block for rank q (pack_target_labels' layout, one row).
  std::vector<std::vector<std::int64_t>> sent(static_cast<std::size_t>(cp));
  for (std::int64_t p = 0; p < cp; ++p) {
    sent[p].assign(static_cast<std::size_t>(cp * width * 2), kIgnoreLabel);
    for (std::int64_t q = 0; q < cp; ++q) {
      for (std::size_t i = 0; i < plans[p].send[q].size(); ++i) {
        const std::int64_t g = row.index[p][plans[p].send[q][i]];
        sent[p][(q * width + i) * 2] = labels[g];
        sent[p][(q * width + i) * 2 + 1] = row.doc_ids[g];
      }
    }
  }
  std::vector<RankTargets> out(static_cast<std::size_t>(cp));
  for (std::int64_t r = 0; r < cp; ++r) {
    std::vector<std::int64_t> received;  // block p of rank r = block r of rank p
    for (std::int64_t p = 0; p < cp; ++p) {
      received.insert(received.end(), sent[p].begin() + r * width * 2,
                      sent[p].begin() + (r + 1) * width * 2);
    }
    std::vector<std::int64_t> mine;
    std::vector<std::int32_t> docs;
    for (std::int64_t g : row.index[r]) {
      mine.push_back(labels[g]);
      docs.push_back(row.doc_ids[g]);
    }
    for (std::int64_t k = 0; k < local; ++k) {
      const Target t = visit_map(map, [&](auto m) {
        return shifted_target(m, r, 0, k, row.padded_len, depth, row.packed, true, mine.data(),
                              docs.data(), plans[r].recv_index[k],
                              ReceivedLabels{received.data(), 1, width});
      });
      out[r].label.push_back(t.contributes ? t.label : kIgnoreLabel);
      out[r].contributes.push_back(t.contributes);
    }
  }
  return out;
}

}  // namespace cplab::gpu::shifted_target_fixtures
