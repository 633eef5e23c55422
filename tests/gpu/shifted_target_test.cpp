// The shifted loss's target selection as the device runs it (gpu/host/shifted_target.hpp): the
// host's exchange plan, the all-to-all's layout and the per-token pick, simulated for every rank on
// the host (shifted_target_fixtures.hpp) and compared with the targets read off the reference's
// global stream, for every layout. Each layout's worked examples are in its own test file
// (layouts/ID_test.cpp).
#include "gpu/host/shifted_target.hpp"

#include <gtest/gtest.h>

#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "layouts/row_acceptance.hpp"
#include "reference/plan.hpp"
#include "reference/token_shift.hpp"
#include "tests/gpu/shifted_target_fixtures.hpp"

namespace cplab::gpu {
namespace {

using shifted_target_fixtures::simulate;

// Depths 1-4 (SPEC §6.1): at depth 4 and C = 4 a chunk is often shorter than the depth, so targets
// come from two and three ranks ahead, and short documents end before the target.
TEST(ShiftedTarget, every_layout_cp_and_depth_fetches_the_label_depth_slots_ahead) {
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
      for (const auto& docs : doc_sets) {
        const sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row(docs, 21));
        rows.push_back(reference::plan_row(spec, row.seq_len, &docs, &row.documents));
      }
      for (const RowPlan& row : rows) {
        std::vector<std::int64_t> labels(static_cast<std::size_t>(row.padded_len));
        for (std::int64_t g = 0; g < row.padded_len; ++g)
          labels[g] = g % 9 == 4 ? kIgnoreLabel : 1000 + g;
        for (std::int64_t depth = 1; depth <= 4; ++depth) {
          const auto got = simulate(spec, row, labels, depth);
          for (std::int64_t r = 0; r < cp; ++r) {
            for (std::int64_t k = 0; k < row.local_len(); ++k) {
              const std::int64_t g = row.index[r][k];
              // The reference's target slot: in the stream, and in g's document (not row
              // padding) when the row is packed.
              const std::int64_t ahead = reference::target_slot(row, g, depth);
              const bool has = ahead >= 0;
              const bool contributes = has && labels[ahead] != kIgnoreLabel;
              EXPECT_EQ(got[r].contributes[k], contributes)
                  << layout.name << " cp " << cp << " depth " << depth << " rank " << r << " k "
                  << k;
              EXPECT_EQ(got[r].label[k], contributes ? labels[ahead] : kIgnoreLabel)
                  << layout.name << " cp " << cp << " depth " << depth << " L " << row.padded_len
                  << " rank " << r << " k " << k << " slot " << g;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cplab::gpu
