// SPEC §9: every worked example, with exactly the numbers given there.
#include <cmath>

#include "layouts/ptrr.hpp"
#include "layouts/usp.hpp"
#include "reference/loss.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"
#include "sim/layout_map.hpp"
#include "support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

Ints local_values(const RowPlan& row, const Ints& values, std::int64_t rank) {
  Ints out;
  for (std::int64_t g : row.index[rank]) out.push_back(values[g]);
  return out;
}

TEST(SpecExample1, HeadTailCp4OnSixteenTokens) {
  const RowPlan row = plan_row(make_spec("head-tail", 4), 16);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
  EXPECT_EQ(causal_work(row), (Ints{34, 34, 34, 34}));
}

TEST(SpecExample1, HeadTailCp2OnEightTokens) {
  EXPECT_EQ(plan_row(make_spec("head-tail", 2), 8).index,
            (std::vector<Ints>{{0, 1, 6, 7}, {2, 3, 4, 5}}));
}

TEST(SpecExample1, OwnerOfSlot13AtCp2) {
  const RowPlan row =
      plan_row(make_spec("head-tail", 2), 16);  // c = 4: q = 3 >= C, rank 0, offset 5
  EXPECT_EQ(row.index[0][5], 13);
}

TEST(SpecExample2, ContiguousPadsSixTokensToEight) {
  LayoutSpec spec = make_spec("contiguous", 2);
  spec.pad_token_id = 7;
  const Batch batch = bshd_batch(1, 6);
  const ShardPlan plan = reference::plan(spec, batch);
  ASSERT_EQ(plan.rows[0].padded_len, 8);
  EXPECT_EQ(plan.rows[0].index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const Batch rank1 = reference::shard_batch(plan, batch)[0][1];
  // Rank 1 holds slots 4..7: caller tokens 4, 5, then the pad slots 6, 7.
  EXPECT_EQ(rank1.at(keys::input_ids).to_vector<std::int64_t>(), (Ints{4, 5, 7, 7}));
  EXPECT_EQ(rank1.at(keys::labels).to_vector<std::int64_t>(), (Ints{4, 5, -100, -100}));
  EXPECT_EQ(rank1.at(keys::position_ids).to_vector<std::int64_t>(), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(rank1.at(keys::loss_mask).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{1, 1, 0, 0}));
}

TEST(SpecExample3, ThdDocuments5And3And8AtCp2) {
  const Ints docs{5, 3, 8};
  const RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 12, 20}));
  Ints chunks;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    chunks.push_back((row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]) / 4);
  }
  EXPECT_EQ(chunks, (Ints{2, 1, 2}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 6, 7, 8, 11, 12, 13, 18, 19}));
  EXPECT_EQ(row.index[1], (Ints{2, 3, 4, 5, 9, 10, 14, 15, 16, 17}));
  EXPECT_EQ(row.local_cu_seqlens, (std::vector<Ints>{{0, 4, 6, 10}, {0, 4, 6, 10}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 1, 6, 7, 0, 3, 0, 1, 6, 7}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{2, 3, 4, 5, 1, 2, 2, 3, 4, 5}));
}

TEST(SpecExample4, ThdDocuments4And12BalanceWork) {
  const Ints docs{4, 12};
  RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(causal_work(row), (Ints{44, 44}));
  // The document-major bug: every document's chunks in rank order, then cut into equal halves.
  Ints document_major;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    for (const Ints& local : row.index) {
      for (std::int64_t g : local) {
        if (g >= row.cu_seqlens_padded[i] && g < row.cu_seqlens_padded[i + 1])
          document_major.push_back(g);
      }
    }
  }
  row.index = {Ints(document_major.begin(), document_major.begin() + 8),
               Ints(document_major.begin() + 8, document_major.end())};
  EXPECT_EQ(causal_work(row), (Ints{26, 62}));
}

TEST(SpecExample5, MagiOneCausalDocument) {
  const RowPlan row = plan_row(make_spec("magi", 4), 32);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 42, 58, 74, 90, 106, 122}));
  for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(row.map_costs[j], 16 * j + 10);
  // The assignment, rank-major: rank 0 {0, 7}, rank 1 {1, 6}, rank 2 {2, 5}, rank 3 {3, 4}.
  EXPECT_EQ(row.map.table, (Ints{0, 7, 1, 6, 2, 5, 3, 4}));
  EXPECT_EQ(causal_work(row), (Ints{132, 132, 132, 132}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 2, 3, 28, 29, 30, 31}));
}

TEST(SpecExample6, MagiTwoDocumentsOf8And24) {
  const Ints docs{8, 24};
  const RowPlan row = plan_row(make_spec("magi", 4), sum(docs), &docs);
  EXPECT_EQ(row.map_costs, (Ints{10, 26, 10, 26, 42, 58, 74, 90}));
  EXPECT_EQ(row.map.table, (Ints{0, 7, 2, 6, 1, 5, 3, 4}));  // rank-major, two chunks each
  Ints loads;
  for (std::size_t r = 0; r < 4; ++r)
    loads.push_back(row.map_costs[row.map.table[2 * r]] + row.map_costs[row.map.table[2 * r + 1]]);
  EXPECT_EQ(loads, (Ints{100, 84, 84, 68}));
  EXPECT_EQ(causal_work(row), loads);
}

// Example 7: the target of every local token, in local order, tokens t_k labelled k.
std::vector<Ints> local_targets(const Batch& batch) {
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  const Tensor logits(DType::f32, {1, 16, 16});
  Tensor valid(DType::b8, {1, 16});
  for (std::int64_t i = 0; i < 16; ++i) valid.set(i, 1);
  const auto loss = reference::shifted_loss_caller(plan, logits, batch.at(keys::labels), valid);
  std::vector<Ints> targets(2);
  for (std::int64_t r = 0; r < 2; ++r) targets[r] = local_values(plan.rows[0], loss.target[0], r);
  return targets;
}

TEST(SpecExample7, ShiftedTargetsCrossRanks) {
  const auto targets = local_targets(bshd_batch(1, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_NE(targets[0][3], 12) << "a local shift after the split";
}

TEST(SpecExample7, DocumentBoundaryEndsTheShift) {
  const auto targets = local_targets(packed_batch({{8, 8}}, 16));
  EXPECT_EQ(targets[0], (Ints{1, 2, 3, 4, 13, 14, 15, -1}));
  EXPECT_EQ(targets[1], (Ints{5, 6, 7, -1, 9, 10, 11, 12}));
}

TEST(SpecExample8, LossIsNormalisedByTheGlobalCount) {
  // head-tail C=2, L=16: rank 0 holds 0-3 and 12-15, rank 1 holds 4-11. With slot 14 invalid and
  // slot 15 without a target, rank 0 has 6 contributing tokens and rank 1 has 8.
  const Batch batch = bshd_batch(1, 16);
  const ShardPlan plan = reference::plan(make_spec("head-tail", 2), batch);
  Tensor labels(DType::i64, {1, 16}), valid(DType::b8, {1, 16}), logits(DType::f32, {1, 16, 2});
  for (std::int64_t g = 0; g < 16; ++g) {
    labels.set(g, 1);
    valid.set(g, g == 14 ? 0 : 1);
    // CE([a, 0], 1) = log(1 + e^a): choose a for CE 1.0 on rank 0's tokens and 2.0 on rank 1's.
    const double ce = (g >= 4 && g < 12) ? 2.0 : 1.0;
    logits.set(g * 2, std::log(std::exp(ce) - 1.0));
  }
  const auto loss = reference::shifted_loss(plan, logits, labels, valid);
  EXPECT_EQ(loss.contributing_total, 14);
  EXPECT_EQ(loss.rank_contributing, (Ints{6, 8}));
  EXPECT_NEAR(loss.global_mean, 22.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.global_mean, 1.5714286, 1e-6);
  EXPECT_NEAR(loss.rank_loss[0], 6.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR(loss.rank_loss[1], 16.0 * 2.0 / 14.0, 1e-6);
  EXPECT_NEAR((loss.rank_loss[0] + loss.rank_loss[1]) / 2.0, 22.0 / 14.0, 1e-6);
  // Each rank's own mean (its CE sum over its own count) is the classic bug: 1.0 and 2.0, mean 1.5.
  double mean_of_local_means = 0.0;
  for (std::int64_t r = 0; r < 2; ++r) {
    const double rank_sum = loss.rank_loss[r] * 14.0 / 2.0;
    mean_of_local_means += rank_sum / static_cast<double>(loss.rank_contributing[r]) / 2.0;
  }
  EXPECT_NEAR(mean_of_local_means, 1.5, 1e-6);
  EXPECT_GT(std::abs(loss.global_mean - mean_of_local_means), 0.05);
}

// SPEC §9.13: usp, ring degree R × Ulysses degree U = C, global rank ring·U + ulysses.
LayoutSpec usp_spec(std::int64_t cp, std::int64_t ring) {
  LayoutSpec spec = make_spec("usp", cp);
  layouts::usp_ring_degree.set(spec, ring);
  return spec;
}

// The closed form (sim/layouts/usp_map.hpp) of a reference row, every rank.
std::vector<Ints> usp_closed_form(const RowPlan& row) {
  const sim::LayoutMap map(sim::layout_descriptor("usp"), row.cp, row.padded_len, row.map);
  std::vector<Ints> index;
  for (std::int64_t r = 0; r < row.cp; ++r) index.push_back(map.local_index(r));
  return index;
}

TEST(SpecExample13, UspRing2Ulysses2OnSixteenTokens) {
  const RowPlan row = plan_row(usp_spec(4, 2), 16);
  EXPECT_EQ(row.padded_len, 16);
  const std::vector<Ints> want = {{0, 1, 2, 3}, {12, 13, 14, 15}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  EXPECT_EQ(row.index, want);
  EXPECT_EQ(usp_closed_form(row), want);
  const Ints work = causal_work(row);
  EXPECT_EQ(work, (Ints{10, 58, 26, 42}));
  EXPECT_EQ(work[0] + work[1], 68);  // per ring group: head-tail's 34 × U
  EXPECT_EQ(work[2] + work[3], 68);
}

TEST(SpecExample13, UspOwnerOfSlot13) {
  const RowPlan row = plan_row(usp_spec(4, 2), 16);
  EXPECT_EQ(row.index[1][1], 13);
  const sim::LayoutMap map(sim::layout_descriptor("usp"), 4, 16, row.map);
  const index_math::Slot slot = map.owner(13);
  EXPECT_EQ(slot.rank, 1);
  EXPECT_EQ(slot.offset, 1);
}

TEST(SpecExample13, UspPartAcrossTheTwoChunks) {
  const RowPlan row = plan_row(usp_spec(6, 2), 24);
  const std::vector<Ints> want = {{0, 1, 2, 3}, {4, 5, 18, 19},   {20, 21, 22, 23},
                                  {6, 7, 8, 9}, {10, 11, 12, 13}, {14, 15, 16, 17}};
  EXPECT_EQ(row.index, want);
  EXPECT_EQ(usp_closed_form(row), want);
  EXPECT_EQ(causal_work(row), (Ints{10, 50, 90, 34, 50, 66}));
}

TEST(SpecExample13, UspPadsToTwoC) {
  const RowPlan row = plan_row(usp_spec(4, 2), 10);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index, plan_row(usp_spec(4, 2), 16).index);
  EXPECT_EQ(row.valid_tokens, (Ints{4, 0, 4, 2}));
}

TEST(SpecExample13, UspDegenerateDegrees) {
  EXPECT_EQ(plan_row(usp_spec(2, 1), 8).index, (std::vector<Ints>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const RowPlan ring_only = plan_row(usp_spec(4, 4), 16);
  EXPECT_EQ(ring_only.index, plan_row(make_spec("head-tail", 4), 16).index);
  EXPECT_EQ(usp_closed_form(ring_only), ring_only.index);
}

TEST(SpecExample13, UspRingDegreeMustDivideC) {
  EXPECT_ERROR(plan_row(usp_spec(4, 3), 16), "ring degree R=3 does not divide the CP size C=4");
}

// The document-major order of §9.4 / §9.10: every document's per-rank chunks in rank order, the
// flattened stream cut into C equal contiguous pieces.
std::vector<Ints> document_major(const RowPlan& row, const Ints& bounds) {
  Ints flat;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    for (const Ints& local : row.index) {
      for (std::int64_t g : local) {
        if (g >= bounds[i] && g < bounds[i + 1]) flat.push_back(g);
      }
    }
  }
  std::vector<Ints> pieces;
  const auto piece = static_cast<std::ptrdiff_t>(flat.size() / row.index.size());
  for (std::size_t r = 0; r < row.index.size(); ++r)
    pieces.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(r) * piece,
                        flat.begin() + static_cast<std::ptrdiff_t>(r + 1) * piece);
  return pieces;
}

TEST(SpecExample10, PerDocHeadTailDocuments8And4) {
  const Ints docs{8, 4};
  RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), sum(docs), &docs);
  EXPECT_EQ(row.padded_len, 12);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 6, 7, 8, 11}, {2, 3, 4, 5, 9, 10}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 1, 6, 7, 8, 11}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{2, 3, 4, 5, 9, 10}));
  for (std::int64_t r = 0; r < 2; ++r) {
    Ints ids;
    for (std::int64_t g : row.index[r]) ids.push_back(row.doc_ids[g]);
    EXPECT_EQ(ids, (Ints{1, 1, 1, 1, 2, 2})) << "rank " << r;
  }
  EXPECT_TRUE(row.local_cu_seqlens.empty());
  EXPECT_EQ(causal_work(row), (Ints{23, 23}));
  row.index = document_major(row, {0, 8, 12});
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 6, 7, 2, 3}, {4, 5, 8, 11, 9, 10}}));
  EXPECT_EQ(causal_work(row), (Ints{25, 21}));
}

TEST(SpecExample10, PerDocHeadTailDocuments4And12IsThdsMap) {
  const Ints docs{4, 12};
  RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), sum(docs), &docs);
  EXPECT_EQ(row.index, plan_row(make_spec("thd", 2), sum(docs), &docs).index);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(causal_work(row), (Ints{44, 44}));
  row.index = document_major(row, {0, 4, 16});
  EXPECT_EQ(causal_work(row), (Ints{26, 62}));
}

TEST(SpecExample10, PerDocHeadTailTheCallersPadding) {
  const Ints real{3, 4}, padded{4, 4};
  const RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), 8, &real, &padded);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 3, 4, 7}, {1, 2, 5, 6}}));
  EXPECT_EQ(row.real[3], 0) << "slot 3 is the caller's pad";
  EXPECT_EQ(row.valid_tokens, (Ints{3, 4}));
}

TEST(SpecExample10, PerDocHeadTailRefusesRowsTheCallerDidNotPad) {
  const LayoutSpec spec = make_spec("per-doc-head-tail", 2);
  const Ints odd{5, 3}, short_row{4, 4};
  const auto message = [](const auto& plan) -> std::string {
    try {
      plan();
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const auto expect_refused = [&](const std::string& got, const std::string& part) {
    EXPECT_NE(got.find(part), std::string::npos) << got;
  };
  expect_refused(message([&] { plan_row(spec, 8, &odd); }),
                 "document 1 occupies 5 slots, not a multiple of 2C=4");
  expect_refused(message([&] { plan_row(spec, 10); }),
                 "a BSHD row of S=10 is one document, not a multiple of 2C=4");
  expect_refused(message([&] { plan_row(spec, 12, &short_row); }),
                 "the documents occupy 8 of the row's S=12 slots");
  // At C = 1 every layout is the identity, whatever the documents.
  const LayoutSpec one = make_spec("per-doc-head-tail", 1);
  EXPECT_EQ(plan_row(one, 8, &odd).index, (std::vector<Ints>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(plan_row(one, 10).padded_len, 10);
}

// SPEC §9.11: torch's docstring example, block size 1, documents of 4, 8 and 4 tokens, C = 2.
TEST(SpecExample11, PtrrTorchDocstringExample) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 1);
  const Ints docs{4, 8, 4};
  const RowPlan row = plan_row(spec, 16, &docs);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.map_costs, (Ints{1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{2, 3, 5, 6, 8, 11, 12, 13}, {0, 1, 4, 7, 9, 10, 14, 15}}));
  EXPECT_EQ(row.map.table, (Ints{2, 3, 5, 6, 8, 11, 12, 13, 0, 1, 4, 7, 9, 10, 14, 15}));
  EXPECT_EQ(row.map.unit, 1);
  EXPECT_EQ(causal_work(row), (Ints{28, 28}));  // at B = 1 a block's cost is its query's work
}

TEST(SpecExample11, PtrrBlocksOfTwoKeepTheirSlotsTogether) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 2);
  const Ints docs{4, 8, 4};
  const RowPlan row = plan_row(spec, 16, &docs);
  // Blocks [0,1] [2,3] | [4,5] .. [10,11] | [12,13] [14,15]: costs 1 2 | 1 2 3 4 | 1 2.
  EXPECT_EQ(row.map_costs, (Ints{1, 2, 1, 2, 3, 4, 1, 2}));
  // Sorted 5 4 | 1 3 | 7 0 | 2 6, odd rows reversed: rank 0 gets 5, 3, 7, 6.
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{6, 7, 10, 11, 12, 13, 14, 15}, {0, 1, 2, 3, 4, 5, 8, 9}}));
}

TEST(SpecExample11, PtrrRefusesBlocksThatDoNotDivideOverTheRanks) {
  LayoutSpec spec = make_spec("ptrr", 2);
  layouts::ptrr_block_size.set(spec, 4);
  EXPECT_ERROR(plan_row(spec, 10), "3 blocks of B=4, which do not divide over cp=2");
  EXPECT_EQ(plan_row(spec, 13).padded_len, 16);  // 4 blocks, the last one padded
  spec.cp = 1;
  EXPECT_EQ(plan_row(spec, 10).padded_len, 10);  // C = 1: the identity, nothing padded
}

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

}  // namespace
}  // namespace cplab::testing
