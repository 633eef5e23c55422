// llama3-varlen on the twin: the rank-local varlen segments (searchsorted over the document
// bounds, as llama3_flash_attn_prepare_cu_seqlens has it) against the reference's document-by-
// document construction, the key windows a causal varlen kernel reads, and the row-length rule.
#include <gtest/gtest.h>

#include <functional>

#include "layouts/partition.hpp"
#include "layouts/varlen_windows.hpp"
#include "reference/plan.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::simtest {
namespace {

using testsupport::Ints;

LayoutSpec llama3(std::int64_t cp) {
  LayoutSpec spec;
  spec.layout = "llama3-varlen";
  spec.cp = cp;
  return spec;
}

sim::MicrobatchRows packed_row(const Ints& docs, std::int64_t len) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  rows.packed = true;
  rows.seq_lens = docs;
  return rows;
}

TEST(Llama3Varlen, RankSegmentsOfTheSpecExample) {
  const Ints bounds{0, 7, 13, 20};
  const sim::PartitionRules& rules = sim::standard_rules();
  EXPECT_EQ(rules.varlen_segments(bounds, 20, 4, 1),
            (VarlenSegments{{0, 2, 5}, {0, 7, 10}, 0, 10}));
  EXPECT_EQ(rules.varlen_segments(bounds, 20, 4, 2), (VarlenSegments{{0, 3, 5}, {0, 6, 8}, 7, 15}));
  const ShardLayout mine = sim::partition_rank(llama3(4), 2, packed_row({7, 6, 7}, 20));
  ASSERT_EQ(mine.varlen.size(), 1u);
  EXPECT_EQ(mine.varlen[0], (VarlenSegments{{0, 3, 5}, {0, 6, 8}, 7, 15}));
  EXPECT_EQ(mine.index[0], (Ints{10, 11, 12, 13, 14}));
}

// Every packed row of up to 8 slots (zero-length documents and row padding included) on every C
// dividing it: the searchsorted rule and the reference's construction agree on every rank.
TEST(Llama3Varlen, SearchsortedSegmentsEqualTheConstructionOnEverySmallRow) {
  int rows_checked = 0;
  std::function<void(Ints&, std::int64_t, std::int64_t)> walk = [&](Ints& docs, std::int64_t used,
                                                                    std::int64_t len) {
    if (!docs.empty()) {
      for (std::int64_t cp = 1; cp <= len; ++cp) {
        if (len % cp != 0) continue;
        const RowPlan want = reference::plan_row(llama3(cp), len, &docs);
        for (std::int64_t r = 0; r < cp; ++r) {
          const ShardLayout got = sim::partition_rank(llama3(cp), r, packed_row(docs, len));
          ASSERT_EQ(got.varlen.size(), 1u);
          ASSERT_EQ(got.varlen[0], want.varlen[static_cast<std::size_t>(r)])
              << "docs " << ::testing::PrintToString(docs) << " S=" << len << " cp=" << cp
              << " rank " << r;
        }
        ++rows_checked;
      }
    }
    if (docs.size() >= 4) return;
    for (std::int64_t n = 0; used + n <= len; ++n) {
      docs.push_back(n);
      walk(docs, used + n, len);
      docs.pop_back();
    }
  };
  for (std::int64_t len = 1; len <= 8; ++len) {
    Ints docs;
    walk(docs, 0, len);
  }
  EXPECT_GT(rows_checked, 1000);
}

// Rank 2 of the example: its first segment (3 queries of document 2) sees keys 7..(10+j), its
// second (2 queries of document 3) keys 13..(13+j); with the keys not extended, the second
// segment's 2 queries would align to 7 keys and see 13..18 and 13..19.
TEST(Llama3Varlen, KeyWindowsAlignTheDiagonalBottomRight) {
  const std::vector<sim::KeyWindow> w =
      sim::query_key_windows(VarlenSegments{{0, 3, 5}, {0, 6, 8}, 7, 15}, 5, 20);
  const std::vector<std::pair<std::int64_t, std::int64_t>> want = {
      {7, 11}, {7, 12}, {7, 13}, {13, 14}, {13, 15}};
  ASSERT_EQ(w.size(), want.size());
  for (std::size_t j = 0; j < w.size(); ++j) {
    EXPECT_EQ(std::make_pair(w[j].begin, w[j].end), want[j]) << "query " << j;
  }
  const std::vector<sim::KeyWindow> wrong =
      sim::query_key_windows(VarlenSegments{{0, 3, 5}, {0, 6, 13}, 7, 20}, 5, 20);
  EXPECT_EQ(std::make_pair(wrong[3].begin, wrong[3].end), std::make_pair(13L, 19L));
  EXPECT_ERROR(sim::query_key_windows(VarlenSegments{{0, 3, 4}, {0, 6, 8}, 7, 15}, 5, 20),
               "do not describe 5 local queries");
}

TEST(Llama3Varlen, RefusesRowsThatAreNotAMultipleOfCAndBshdRows) {
  EXPECT_ERROR(sim::partition_rank(llama3(4), 0, packed_row({4, 6}, 10)), "pads nothing", "S=10",
               "multiple of C=4");
  sim::MicrobatchRows bshd;
  bshd.rows = 1;
  bshd.caller_len = 8;
  EXPECT_ERROR(sim::partition_rank(llama3(2), 0, bshd), "packed rows");
}

}  // namespace
}  // namespace cplab::simtest
