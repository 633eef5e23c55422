// Per-token arithmetic of the copy and partition kernels, run on the host: blocked token offsets
// (the all-gather's layout), fill bytes of any piece, and the partition's binary search of a
// re-laid row against the reference's partition built by construction.
#include "gpu/host/token_math.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "gpu/host/copy_plan.hpp"
#include "reference/plan.hpp"
#include "sim/layouts/thd_map.hpp"

namespace cplab::gpu {
namespace {

TEST(TokenOffset, plain_layout_is_row_major) {
  for (std::int64_t o = 0; o < 3; ++o) {
    for (std::int64_t t = 0; t < 5; ++t) EXPECT_EQ(token_offset(o, t, 5, 0, 3), o * 5 + t);
  }
}

TEST(TokenOffset, blocked_layout_is_the_concatenation_of_rank_shards) {
  // C = 3 ranks each holding [outer = 2][ℓ = 4] tokens, all-gathered: rank r's token (o, k) sits at
  // r·(2·4) + o·4 + k; token_offset sees it as token t = r·4 + k of outer slice o.
  const std::int64_t cp = 3, outer = 2, local = 4;
  std::set<std::int64_t> seen;
  for (std::int64_t r = 0; r < cp; ++r) {
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t k = 0; k < local; ++k) {
        const std::int64_t at = token_offset(o, r * local + k, cp * local, local, outer);
        EXPECT_EQ(at, r * outer * local + o * local + k);
        seen.insert(at);
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(cp * outer * local));
}

TEST(FillBits, every_aligned_piece_is_the_pattern_bytes_at_its_offset) {
  const std::uint8_t element[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  for (std::int64_t es : {1, 2, 4, 8}) {
    const auto pattern = fill_pattern(element, es);
    std::uint64_t first8;
    std::memcpy(&first8, pattern.data(), 8);
    for (std::int64_t width : {1, 2, 4, 8}) {
      for (std::int64_t at = 0; at < 64; at += width) {
        std::uint64_t expected = 0;
        std::memcpy(&expected, pattern.data() + at % 16, static_cast<std::size_t>(width));
        EXPECT_EQ(fill_bits(first8, at, width), expected)
            << "element " << es << " width " << width << " at " << at;
      }
    }
  }
}

// What the partition kernel computes for every local token of a re-laid row (thd's), against the
// reference plan.
void expect_relaid_tokens_match_reference(const std::vector<std::int64_t>& docs, std::int64_t cp,
                                          std::int64_t caller_len) {
  LayoutSpec spec;
  spec.layout = "thd";
  spec.cp = cp;
  const RowPlan row = reference::plan_row(spec, caller_len, &docs);
  const index_math::ThdMap map{cp, row.cu_seqlens_padded.data(),
                               static_cast<std::int64_t>(docs.size())};
  const auto n_docs = static_cast<std::int64_t>(docs.size());
  for (std::int64_t r = 0; r < cp; ++r) {
    for (std::int64_t k = 0; k < row.local_len(); ++k) {
      const RelaidToken t =
          relaid_token(map, row.cu_seqlens_padded.data(), n_docs, docs.data(), r, k);
      const std::int64_t g = row.index[r][k];
      SCOPED_TRACE(::testing::Message()
                   << "cp " << cp << " rank " << r << " k " << k << " g " << g);
      EXPECT_EQ(t.slot, g);
      EXPECT_EQ(t.position, row.positions[g]);
      EXPECT_EQ(t.doc_id, row.doc_ids[g]);
      EXPECT_EQ(t.real ? 1 : 0, row.real[g]);
    }
  }
}

TEST(RelaidToken, spec_example_3) {
  // Documents 5, 3, 8 on C = 2: r0 [0,1,6,7, 8,11, 12,13,18,19], positions [0,1,6,7,0,3,0,1,6,7].
  const std::vector<std::int64_t> docs = {5, 3, 8};
  const std::vector<std::int64_t> cu = {0, 8, 12, 20};
  const index_math::ThdMap map{2, cu.data(), 3};
  const std::int64_t slots[] = {0, 1, 6, 7, 8, 11, 12, 13, 18, 19};
  const std::int64_t positions[] = {0, 1, 6, 7, 0, 3, 0, 1, 6, 7};
  const auto token = [&](std::int64_t r, std::int64_t k) {
    return relaid_token(map, cu.data(), 3, docs.data(), r, k);
  };
  for (std::int64_t k = 0; k < 10; ++k) {
    EXPECT_EQ(token(0, k).slot, slots[k]) << k;
    EXPECT_EQ(token(0, k).position, positions[k]) << k;
  }
  EXPECT_EQ(token(1, 4).doc_id, 2);  // r1 token 4 is slot 9, document 2
  EXPECT_FALSE(token(0, 3).real);    // slot 7: document 1's padding
  expect_relaid_tokens_match_reference(docs, 2, 16);
}

TEST(RelaidToken, matches_the_reference_with_zero_length_documents_and_row_padding) {
  for (std::int64_t cp : {2, 3, 4}) {
    expect_relaid_tokens_match_reference({0, 7, 1, 0, 9}, cp, 21);
    expect_relaid_tokens_match_reference({4, 12}, cp, 16);
    expect_relaid_tokens_match_reference({1}, cp, 40);  // mostly row padding on the last document
  }
}

}  // namespace
}  // namespace cplab::gpu
