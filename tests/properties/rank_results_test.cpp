// What a rank's result becomes on the wire when ranks are processes (sim-mpi): every type a
// property's ranks return comes back exactly, and bytes that are cut short or run long are an
// error, not a misread.
#include "properties/rank_results.hpp"

#include <gtest/gtest.h>

#include "layouts/layout_descriptor.hpp"
#include "properties/case.hpp"
#include "properties/generators.hpp"
#include "properties/harness.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties {
namespace {

void expect_same_layout(const ShardLayout& a, const ShardLayout& b) {
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.cp, b.cp);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.padded_len, b.padded_len);
  EXPECT_EQ(a.original_len, b.original_len);
  EXPECT_EQ(a.caller_len, b.caller_len);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.packed, b.packed);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.caller_pos, b.caller_pos);
  EXPECT_EQ(a.positions, b.positions);
  EXPECT_EQ(a.doc_ids, b.doc_ids);
  EXPECT_EQ(a.real, b.real);
  EXPECT_EQ(a.cu_seqlens, b.cu_seqlens);
  EXPECT_EQ(a.valid_tokens, b.valid_tokens);
  EXPECT_EQ(a.cu_seqlens_padded, b.cu_seqlens_padded);
  EXPECT_EQ(a.map, b.map);
  EXPECT_EQ(a.pad_policy, b.pad_policy);
  EXPECT_EQ(a.pad_token_id, b.pad_token_id);
  EXPECT_EQ(a.varlen, b.varlen);
}

// A few small cases of every registered layout as its generator draws them (its own options, BSHD
// and packed rows, dtypes and keys), at C = 2, 3 and 4 where it shards.
std::vector<Case> small_cases_of_every_layout() {
  GenOptions options;
  options.cp = {2, 3, 4};
  options.max_tokens = 64;
  std::vector<Case> cases;
  for (const LayoutEntry& entry : layout_table()) {
    const rc::Gen<Case> gen = gen_case(entry, options);
    for (int i = 0; i < 6; ++i)
      cases.push_back(
          gen(rc::Random(static_cast<std::uint64_t>(6007 * i + 5)), 10 + 15 * i).value());
  }
  return cases;
}

TEST(RankResults, ShardsOfEveryLayoutComeBackExactly) {
  sim::SimImplementation impl;
  for (const Case& c : small_cases_of_every_layout()) {
    const std::string text = print_case(c);
    const Subject subject(c);
    const auto shards = shard_on_ranks(impl, c.spec, subject.batch);
    for (const std::vector<RankShard>& mine : shards) {
      const auto back = wire::from_bytes<std::vector<RankShard>>(wire::to_bytes(mine));
      ASSERT_EQ(back.size(), mine.size()) << text;
      for (std::size_t m = 0; m < mine.size(); ++m) {
        expect_same_layout(back[m].layout, mine[m].layout);
        // A layout whose ranks attend through varlen segments records them (they must travel).
        EXPECT_EQ(mine[m].layout.varlen.empty(),
                  !sim::layout_descriptor(c.spec.layout).attention.varlen_segments)
            << text;
        ASSERT_EQ(back[m].local.tokens.size(), mine[m].local.tokens.size()) << text;
        for (const auto& [key, field] : mine[m].local.tokens) {
          const TokenField& got = back[m].local.tokens.at(key);
          EXPECT_TRUE(got.value == field.value) << text << " key " << key;
          EXPECT_EQ(got.seq_dim, field.seq_dim);
          EXPECT_EQ(got.rule, field.rule);
          EXPECT_EQ(got.pad_value, field.pad_value);
        }
        EXPECT_EQ(back[m].local.seq_lens, mine[m].local.seq_lens);
        EXPECT_EQ(back[m].local.seq_lens_padded, mine[m].local.seq_lens_padded);
        EXPECT_EQ(back[m].local.passthrough.size(), mine[m].local.passthrough.size());
      }
    }
  }
}

TEST(RankResults, LossAndAttentionOutputsComeBackBitForBit) {
  LossOutput loss;
  loss.loss = 0.1 + 0.2;  // not representable exactly: must survive as the same double
  loss.grad = Tensor::from<float>({2, 1, 2}, std::vector<float>{1.5f, -0.0f, 3e-39f, 7.0f});
  loss.contributing_local = 3;
  loss.contributing_total = 11;
  const auto back = wire::from_bytes<LossOutput>(wire::to_bytes(loss));
  EXPECT_EQ(back.loss, loss.loss);
  EXPECT_TRUE(back.grad == loss.grad);
  EXPECT_EQ(back.contributing_local, 3);
  EXPECT_EQ(back.contributing_total, 11);

  AttentionOutput att;
  att.out = Tensor::from<float>({1, 2}, std::vector<float>{1.0f, 2.0f});
  const auto att_back = wire::from_bytes<AttentionOutput>(wire::to_bytes(att));
  EXPECT_TRUE(att_back.out == att.out);
  EXPECT_FALSE(att_back.grad_q.defined());  // an undefined tensor stays undefined
}

TEST(RankResults, CutOrPaddedBytesAreAnError) {
  const std::string bytes = wire::to_bytes(std::vector<std::int64_t>{1, 2, 3});
  EXPECT_THROW(wire::from_bytes<std::vector<std::int64_t>>(bytes.substr(0, bytes.size() - 1)),
               Error);
  EXPECT_THROW(wire::from_bytes<std::vector<std::int64_t>>(bytes + "x"), Error);
}

}  // namespace
}  // namespace cplab::properties
