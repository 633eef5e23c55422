// What each slot of a planned row says (SPEC §1-§3, §8): caller positions, position ids, document
// ids, real flags and cu_seqlens, spelled out by hand; and the load-balance claims of §8.
#include <algorithm>

#include "layouts/contiguous.hpp"
#include "layouts/magi.hpp"
#include "reference/work.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;
using U8s = std::vector<std::uint8_t>;
using I32s = std::vector<std::int32_t>;

TEST(RowFacts, BshdRowPaddedAtItsEnd) {
  const RowPlan row = plan_row(make_spec("head-tail", 2), 7);
  EXPECT_EQ(row.padded_len, 8);
  EXPECT_EQ(row.original_len, 7);
  EXPECT_FALSE(row.packed);
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, 5, 6, -1}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(row.real, (U8s{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(row.valid_tokens, (Ints{3, 4}));  // rank 0 holds slots 0, 1, 6 and the pad 7
}

TEST(RowFacts, PackedRowKeepsCallerOffsetsUnderContiguous) {
  // Documents of 5 and 3 tokens occupying 6 and 4 slots, 3 slots of caller row padding, 3 added.
  const Ints docs{5, 3}, padded{6, 4};
  const RowPlan row = plan_row(make_spec("contiguous", 2), 13, &docs, &padded);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.original_len, -1);
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(row.real, (U8s{1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -1, -1}));
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 6, 10}));
  EXPECT_EQ(row.valid_tokens, (Ints{7, 1}));  // slots 0-7 hold 7 real tokens, 8-15 one
}

TEST(RowFacts, ThdRelaysDocumentsAndMovesTheirTokens) {
  // Caller: [5 real + 1 pad][3 real + 1 pad][3 row padding]. thd at C=2: P = 8, 4; L = 16, the
  // extra 4 slots go to the last document.
  const Ints docs{5, 3}, padded{6, 4};
  const RowPlan row = plan_row(make_spec("thd", 2), 13, &docs, &padded);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 16}));
  EXPECT_EQ(row.local_cu_seqlens, (std::vector<Ints>{{0, 4, 8}, {0, 4, 8}}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.caller_pos, (Ints{0, 1, 2, 3, 4, -1, -1, -1, 6, 7, 8, -1, -1, -1, -1, -1}));
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 1, 6, 7, 8, 9, 14, 15}, {2, 3, 4, 5, 10, 11, 12, 13}}));
}

TEST(RowFacts, MagiPositionsAreStreamIndices) {
  LayoutSpec spec = make_spec("magi", 2);
  layouts::magi_chunk_size.set(spec, 2);
  const Ints docs{3, 3};
  const RowPlan row = plan_row(spec, 6, &docs);
  EXPECT_EQ(row.padded_len, 8);
  EXPECT_EQ(row.positions, (Ints{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(row.doc_ids, (I32s{1, 1, 1, 2, 2, 2, 0, 0}));
  EXPECT_EQ(row.map_costs, (Ints{3, 4, 5, 0}));  // chunk 1: 3 (doc 1) + 1 (doc 2)
}

TEST(RowFacts, EveryLayoutAtCp1IsTheIdentity) {
  const Ints docs{3, 5}, padded{4, 5};
  const RowPlan identity = plan_row(make_spec("identity", 1), 11, &docs, &padded);
  EXPECT_EQ(identity.padded_len, 11);
  for (const auto& [layout, cp] : testsupport::layouts_at({1})) {
    SCOPED_TRACE(layout);
    const RowPlan row = plan_row(make_spec(layout, cp), 11, &docs, &padded);
    EXPECT_EQ(row.padded_len, 11);
    EXPECT_EQ(row.index, identity.index);
    EXPECT_EQ(row.caller_pos, identity.caller_pos);
    EXPECT_EQ(row.positions, identity.positions);
    EXPECT_EQ(row.doc_ids, identity.doc_ids);
    EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 4, 9}));
  }
  EXPECT_EQ(plan_row(make_spec("thd", 1), 11, &docs, &padded).local_cu_seqlens,
            (std::vector<Ints>{{0, 4, 9}}));
  EXPECT_EQ(plan_row(make_spec("magi", 1), 7).padded_len, 7) << "not padded to K = 4";
}

TEST(RowFacts, ContiguousPadMultipleOne) {
  LayoutSpec spec = make_spec("contiguous", 3);
  layouts::contiguous_pad_multiple.set(spec, 1);
  EXPECT_EQ(plan_row(spec, 7).padded_len, 9);
  layouts::contiguous_pad_multiple.set(spec, 2);
  EXPECT_EQ(plan_row(spec, 7).padded_len, 12);
}

TEST(RowFacts, ThdValidTokensFollowTheClampFormula) {
  for (std::int64_t cp : {2, 3, 4}) {
    for (const Ints& docs : std::vector<Ints>{{5, 3, 8}, {1, 0, 13}, {6}, {2, 9, 4, 7}}) {
      SCOPED_TRACE(::testing::Message()
                   << "cp=" << cp << " docs=" << ::testing::PrintToString(docs));
      const RowPlan row = plan_row(make_spec("thd", cp), sum(docs), &docs);
      for (std::int64_t r = 0; r < cp; ++r) {
        std::int64_t expected = 0;
        for (std::size_t i = 0; i < docs.size(); ++i) {
          const std::int64_t c =
              (row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]) / (2 * cp);
          expected += std::clamp(docs[i] - r * c, std::int64_t{0}, c) +
                      std::clamp(docs[i] - (2 * cp - 1 - r) * c, std::int64_t{0}, c);
        }
        EXPECT_EQ(row.valid_tokens[r], expected) << "rank " << r;
      }
    }
  }
}

TEST(LoadBalance, HeadTailEqualOnACausalRow) {
  for (std::int64_t cp : {1, 2, 3, 4, 5, 8}) {
    const Ints work = causal_work(plan_row(make_spec("head-tail", cp), 2 * cp * 5));
    EXPECT_TRUE(std::all_of(work.begin(), work.end(), [&](std::int64_t w) { return w == work[0]; }))
        << cp;
  }
}

TEST(LoadBalance, ThdEqualWithinEveryUnpaddedDocument) {
  const Ints docs{8, 24, 16};
  const RowPlan row = plan_row(make_spec("thd", 4), sum(docs), &docs);
  const Ints visible = reference::visible_keys(row);
  for (std::int32_t doc = 1; doc <= 3; ++doc) {
    Ints per_rank;
    for (const Ints& local : row.index) {
      std::int64_t work = 0;
      for (std::int64_t g : local) work += row.doc_ids[g] == doc ? visible[g] : 0;
      per_rank.push_back(work);
    }
    EXPECT_TRUE(std::all_of(per_rank.begin(), per_rank.end(),
                            [&](std::int64_t w) { return w == per_rank[0]; }))
        << "document " << doc << ": " << ::testing::PrintToString(per_rank);
  }
}

TEST(LoadBalance, MagiMaxAreaWithinBound) {
  for (std::int64_t cp : {2, 3, 4}) {
    for (const Ints& docs : std::vector<Ints>{{8, 24}, {3, 17, 5, 1}, {40}, {9, 9, 9, 9, 9}}) {
      const RowPlan row = plan_row(make_spec("magi", cp), sum(docs), &docs);
      const Ints work = causal_work(row);
      const std::int64_t total = sum(work);
      EXPECT_EQ(total, sum(row.map_costs));
      const std::int64_t largest = *std::max_element(row.map_costs.begin(), row.map_costs.end());
      EXPECT_LE(*std::max_element(work.begin(), work.end()) * cp, total + largest * cp)
          << "cp=" << cp << " docs=" << ::testing::PrintToString(docs);
    }
  }
}

TEST(LoadBalance, ImbalanceIsMaxOverMean) {
  EXPECT_DOUBLE_EQ(reference::imbalance({10, 30}), 1.5);
  EXPECT_DOUBLE_EQ(reference::imbalance({0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(reference::imbalance(causal_work(plan_row(make_spec("contiguous", 2), 8))),
                   26.0 / 18.0);
}

TEST(PinnedLength, ThdUsesAPinnedRowLength) {
  const Ints docs{5, 3, 8};
  const RowPlan row = reference::plan_row(make_spec("thd", 2), 16, &docs, nullptr, 24);
  EXPECT_EQ(row.padded_len, 24);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 12, 24}));
  EXPECT_EQ(row.doc_ids[23], 3) << "row padding belongs to the last document";
}

}  // namespace
}  // namespace cplab::testing
