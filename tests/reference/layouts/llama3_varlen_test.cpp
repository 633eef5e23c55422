// llama3-varlen (SPEC §10.3): the worked examples of §9.12 by the reference and through `cplab
// layout`.
#include "reference/plan.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::plan_row;

// §9.12: documents [0,7,13,20] (cu_seqlens) on C = 4 ranks of n = 5.
TEST(SpecExample12, Llama3VarlenSegmentsOfEveryRank) {
  const Ints docs{7, 6, 7};
  const RowPlan row = plan_row(make_spec("llama3-varlen", 4), 20, &docs);
  EXPECT_EQ(row.padded_len, 20);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{
                {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}, {15, 16, 17, 18, 19}}));
  ASSERT_EQ(row.varlen.size(), 4u);
  const std::vector<VarlenSegments> want = {{{0, 5}, {0, 5}, 0, 5},
                                            {{0, 2, 5}, {0, 7, 10}, 0, 10},
                                            {{0, 3, 5}, {0, 6, 8}, 7, 15},
                                            {{0, 5}, {0, 7}, 13, 20}};
  for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(row.varlen[r], want[r]) << "rank " << r;
}

// torch's VarlenMetadata docstring: rank 2 has cu_seq_q [0,3,5], cu_seq_k [0,6,8] and
// k_local_indices 7..14 (the key slice as a list).
TEST(SpecExample12, TorchVarlenMetadataRank2) {
  const Ints docs{7, 6, 7};
  const RowPlan row = plan_row(make_spec("llama3-varlen", 4), 20, &docs);
  const VarlenSegments& rank2 = row.varlen[2];
  EXPECT_EQ(rank2.cu_seqlens_q, (Ints{0, 3, 5}));
  EXPECT_EQ(rank2.cu_seqlens_k, (Ints{0, 6, 8}));
  Ints k_local_indices;
  for (std::int64_t g = rank2.k_begin; g < rank2.k_end; ++g) k_local_indices.push_back(g);
  EXPECT_EQ(k_local_indices, (Ints{7, 8, 9, 10, 11, 12, 13, 14}));
}

TEST(SpecExample12, Llama3VarlenRowPaddingIsOneMoreSegment) {
  const Ints docs{5, 5};
  const RowPlan row = plan_row(make_spec("llama3-varlen", 3), 12, &docs);
  EXPECT_EQ(row.varlen[1], (VarlenSegments{{0, 1, 4}, {0, 5, 8}, 0, 8}));
  EXPECT_EQ(row.varlen[2], (VarlenSegments{{0, 2, 4}, {0, 5, 7}, 5, 12}));
  EXPECT_EQ(row.valid_tokens, (Ints{4, 4, 2}));
}

TEST(SpecExample12, Llama3VarlenRefusesARowThatIsNotAMultipleOfC) {
  const Ints docs{4, 6};
  EXPECT_ERROR(plan_row(make_spec("llama3-varlen", 4), 10, &docs), "llama3-varlen pads nothing",
               "S=10", "multiple of C=4");
  EXPECT_ERROR(plan_row(make_spec("llama3-varlen", 2), 10), "packed rows");
}

// §9.12 through the CLI: llama3-varlen ranks add cu_seqlens_q, cu_seqlens_k and k_slice; other
// layouts' ranks do not have them.
TEST(CliLayout, Example12Llama3Varlen) {
  const auto out = layout_json("--layout llama3-varlen --cp 4 --doc-lens 7,6,7");
  EXPECT_EQ(out["padded_seq_len"], 20);
  EXPECT_EQ(indices(out)[2], (Ints{10, 11, 12, 13, 14}));
  const auto& rank2 = out["ranks"][2];
  EXPECT_EQ(rank2["cu_seqlens_q"], (Ints{0, 3, 5}));
  EXPECT_EQ(rank2["cu_seqlens_k"], (Ints{0, 6, 8}));
  EXPECT_EQ(rank2["k_slice"], (Ints{7, 15}));
  EXPECT_EQ(out["ranks"][1]["cu_seqlens_k"], (Ints{0, 7, 10}));
  EXPECT_EQ(out["ranks"][3]["k_slice"], (Ints{13, 20}));
  EXPECT_FALSE(rank2.contains("cu_seqlens"));
  const std::string other = testsupport::a_plain_layout();
  ASSERT_NE(other, "llama3-varlen");
  const auto plain = layout_json("--layout " + other + " --cp 4 --doc-lens 7,6,7");
  EXPECT_FALSE(plain["ranks"][0].contains("cu_seqlens_q"));
  EXPECT_FALSE(plain["ranks"][0].contains("k_slice"));
  testsupport::expect_usage_error(
      testsupport::run_cplab("layout --layout llama3-varlen --cp 4 --doc-lens 7,6"),
      {"pads nothing", "S=13", "multiple of C=4"}, "llama3-varlen S=13");
}

}  // namespace
}  // namespace cplab::testing
