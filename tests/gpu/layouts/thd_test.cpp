// thd's own GPU-path host tests: the partition kernel's binary search of a re-laid row
// (gpu/host/token_math.hpp: relaid_token) against the reference's partition built by construction,
// SPEC example 3 among them.
#include <gtest/gtest.h>

#include "gpu/host/token_math.hpp"
#include "layouts/thd_map.hpp"
#include "reference/plan.hpp"

namespace cplab::gpu {
namespace {

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
