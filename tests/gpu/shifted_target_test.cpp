// The shifted loss's target selection as the device runs it (gpu/host/shifted_target.hpp): the
// host's exchange plan, the all-to-all's layout and the per-token pick, simulated for every rank on
// the host and compared with the targets read off the reference's global stream.
#include "gpu/host/shifted_target.hpp"

#include <gtest/gtest.h>

#include "gpu/kernels/layout_map.hpp"
#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "reference/plan.hpp"
#include "sim/layout_map.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::gpu {
namespace {

struct RankTargets {
  std::vector<std::int64_t> label;  // kIgnoreLabel where the token does not contribute
  std::vector<bool> contributes;
};

// Every rank's targets for one row whose global labels are `labels` (length L).
std::vector<RankTargets> simulate(const LayoutSpec& spec, const RowPlan& row,
                                  const std::vector<std::int64_t>& labels) {
  // The one map, from the parameters the reference's construction recorded.
  const sim::LayoutMap layout_map(sim::layout_descriptor(spec.layout), row.cp, row.padded_len,
                                  row.map);
  const MapView map = layout_map.view();
  const std::int64_t cp = row.cp, local = row.local_len();
  std::vector<TargetExchange> plans;
  std::int64_t width = 0;
  for (std::int64_t r = 0; r < cp; ++r) {
    plans.push_back(
        visit_map(map, [&](auto m) { return plan_target_exchange(m, r, row.padded_len); }));
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
        return shifted_target(m, r, 0, k, row.padded_len, row.packed, true, mine.data(),
                              docs.data(), plans[r].recv_index[k],
                              ReceivedLabels{received.data(), 1, width});
      });
      out[r].label.push_back(t.contributes ? t.label : kIgnoreLabel);
      out[r].contributes.push_back(t.contributes);
    }
  }
  return out;
}

TEST(ShiftedTarget, spec_example_7_head_tail_across_ranks) {
  LayoutSpec spec;
  spec.layout = "head-tail";
  spec.cp = 2;
  const RowPlan bshd = reference::plan_row(spec, 16);
  std::vector<std::int64_t> t(16);
  for (std::int64_t g = 0; g < 16; ++g) t[g] = g;  // label of slot g is "t_g"
  const auto whole_row = simulate(spec, bshd, t);
  EXPECT_EQ(whole_row[0].label, (std::vector<std::int64_t>{1, 2, 3, 4, 13, 14, 15, kIgnoreLabel}));
  EXPECT_EQ(whole_row[1].label, (std::vector<std::int64_t>{5, 6, 7, 8, 9, 10, 11, 12}));

  // Documents [0, 8) and [8, 16): r1's 4th target (t8 opens document 2) becomes none.
  const std::vector<std::int64_t> docs = {8, 8};
  const RowPlan packed = reference::plan_row(spec, 16, &docs);
  const auto by_document = simulate(spec, packed, t);
  EXPECT_EQ(by_document[1].label,
            (std::vector<std::int64_t>{5, 6, 7, kIgnoreLabel, 9, 10, 11, 12}));
  EXPECT_EQ(by_document[0].label, whole_row[0].label);
}

TEST(ShiftedTarget, every_layout_and_cp_fetches_the_label_of_the_next_slot) {
  const std::vector<std::int64_t> doc_sets[] = {{5, 3, 8}, {0, 7, 1, 0, 9}, {4, 12}};
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : {1, 2, 3, 4}) {
      LayoutSpec spec;
      spec.layout = layout.name;
      spec.cp = cp;
      layouts::magi_chunk_size.set(spec, 3);
      layouts::ptrr_block_size.set(spec, 1);
      if (layout.cp_off && cp > 1) continue;
      std::vector<RowPlan> rows;
      // The rows nearest to these that the layout takes (as the caller pads them for it, or
      // fitted to the lengths it takes).
      if (layout.bshd_rows)
        rows.push_back(reference::plan_row(spec, sim::nearest_accepted_len(spec, 13)));
      if (layout.packed_rows) {
        for (const auto& docs : doc_sets) {
          const sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row(docs, 21));
          rows.push_back(reference::plan_row(spec, row.seq_len, &docs, &row.documents));
        }
      }
      for (const RowPlan& row : rows) {
        std::vector<std::int64_t> labels(static_cast<std::size_t>(row.padded_len));
        for (std::int64_t g = 0; g < row.padded_len; ++g)
          labels[g] = g % 9 == 4 ? kIgnoreLabel : 1000 + g;
        const auto got = simulate(spec, row, labels);
        for (std::int64_t r = 0; r < cp; ++r) {
          for (std::int64_t k = 0; k < row.local_len(); ++k) {
            const std::int64_t g = row.index[r][k];
            const bool has =
                g + 1 < row.padded_len && (!row.packed || row.doc_ids[g + 1] == row.doc_ids[g]);
            const bool contributes = has && labels[g + 1] != kIgnoreLabel;
            EXPECT_EQ(got[r].contributes[k], contributes)
                << layout.name << " cp " << cp << " rank " << r << " k " << k;
            EXPECT_EQ(got[r].label[k], contributes ? labels[g + 1] : kIgnoreLabel)
                << layout.name << " cp " << cp << " L " << row.padded_len << " rank " << r << " k "
                << k << " slot " << g;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cplab::gpu
