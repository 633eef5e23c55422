// ptrr on the twin (SPEC §10.2): the closed-form block costs and the snake against the reference's
// block mask built slot by slot, torch's docstring example (SPEC §9.11), the refusal of blocks
// that do not divide over the ranks, and the mask the costs are computed under as a hook.
#include "layouts/ptrr.hpp"

#include <gtest/gtest.h>

#include "layouts/partition.hpp"
#include "reference/plan.hpp"
#include "tests/sim/support.hpp"

namespace cplab::simtest {
namespace {

LayoutSpec ptrr_spec(std::int64_t cp, std::int64_t block) {
  LayoutSpec spec;
  spec.layout = "ptrr";
  spec.cp = cp;
  layouts::ptrr_block_size.set(spec, block);
  return spec;
}

sim::MicrobatchRows packed_row(const Ints& docs, std::int64_t seq_len) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = seq_len;
  rows.packed = true;
  rows.seq_lens = docs;
  return rows;
}

TEST(PtrrTwin, torch_docstring_example) {
  const sim::RowStream stream = sim::row_stream(ptrr_spec(2, 1), packed_row({4, 8, 4}, 16));
  EXPECT_EQ(stream.map_costs, (Ints{1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(stream.map.table, (Ints{2, 3, 5, 6, 8, 11, 12, 13, 0, 1, 4, 7, 9, 10, 14, 15}));
  EXPECT_EQ(stream.map.unit, 1);
  EXPECT_EQ(sim::local_index(stream, 0), (Ints{2, 3, 5, 6, 8, 11, 12, 13}));
  EXPECT_EQ(sim::local_index(stream, 1), (Ints{0, 1, 4, 7, 9, 10, 14, 15}));
}

// Rows of every shape the layout takes: BSHD, packed with zero-length documents, the caller's own
// padding inside and after documents, documents that start and end inside blocks.
TEST(PtrrTwin, closed_form_costs_and_snake_equal_the_reference_block_mask) {
  const std::vector<Ints> packed_rows = {{4, 8, 4}, {5, 3, 8}, {0, 7, 1, 0, 9}, {1, 1, 1, 13},
                                         {16},      {2, 0, 2}, {11, 2}};
  int compared = 0;
  for (std::int64_t cp : {2, 3, 4, 8}) {
    for (std::int64_t block : {1, 2, 3, 5}) {
      for (std::int64_t seq_len = 1; seq_len <= 40; ++seq_len) {
        const std::int64_t blocks = (seq_len + block - 1) / block;
        if (blocks % cp != 0) continue;
        SCOPED_TRACE(::testing::Message() << "cp " << cp << " B " << block << " S " << seq_len);
        const LayoutSpec spec = ptrr_spec(cp, block);
        sim::MicrobatchRows bshd;
        bshd.rows = 1;
        bshd.caller_len = seq_len;
        std::vector<std::pair<sim::MicrobatchRows, RowPlan>> rows = {
            {bshd, reference::plan_row(spec, seq_len)}};
        for (const Ints& docs : packed_rows) {
          std::int64_t total = 0;
          for (std::int64_t d : docs) total += d;
          if (total > seq_len) continue;
          rows.emplace_back(packed_row(docs, seq_len), reference::plan_row(spec, seq_len, &docs));
        }
        for (const auto& [meta, row] : rows) {
          const sim::RowStream stream = sim::row_stream(spec, meta);
          ASSERT_EQ(stream.map_costs, row.map_costs);
          ASSERT_EQ(stream.map, row.map);
          for (std::int64_t r = 0; r < cp; ++r)
            ASSERT_EQ(sim::local_index(stream, r), row.index[static_cast<std::size_t>(r)]);
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 200);
}

TEST(PtrrTwin, refuses_blocks_that_do_not_divide_over_the_ranks) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = 10;
  const std::string error = error_of([&] { sim::row_stream(ptrr_spec(2, 4), rows); });
  EXPECT_NE(error.find("ptrr: L=12 (S=10 padded to a multiple of 4) is not a multiple of B·C=8: "
                       "its L/B blocks are dealt out over the ranks (cp=2)"),
            std::string::npos)
      << error;
  EXPECT_NE(error_of([&] { sim::row_stream(ptrr_spec(2, 0), rows); }).find("block size"),
            std::string::npos);
}

// The mask the assignment prices blocks under is a partition step: priced under the plain causal
// mask over the whole stream (torchtitan 3368's mismatch), every block costs its index + 1.
class PlainCausalMask final : public sim::PartitionRules {
  std::vector<sim::SlotSpan> balance_documents(const sim::RowStream& stream) const override {
    return {{0, stream.padded_len}};
  }
};

TEST(PtrrTwin, costs_follow_the_mask_the_rules_give) {
  const PlainCausalMask plain;
  const sim::RowStream stream = sim::row_stream(ptrr_spec(2, 1), packed_row({4, 8, 4}, 16), plain);
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(stream.map_costs[i], i + 1) << "block " << i;
  EXPECT_EQ(sim::local_index(stream, 0, plain), (Ints{0, 3, 4, 7, 8, 11, 12, 15}));
}

}  // namespace
}  // namespace cplab::simtest
