// The Ulysses head all-to-all by construction (SPEC §10.5, §9.14): which heads each rank gets, a
// worked head split by hand, multi-head attention as one attention per head, and the refusals.
#include "reference/ulysses.hpp"

#include <gtest/gtest.h>

#include "reference/attention.hpp"
#include "reference/plan.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using Ints = std::vector<std::int64_t>;

TEST(UlyssesReference, head_groups_of_the_worked_example) {
  // §9.14: U = 4, H = 8, H_kv = 2.
  const UlyssesHeads heads{.query = 8, .kv = 2};
  for (std::int64_t u = 0; u < 4; ++u) {
    EXPECT_EQ(reference::ulysses_head_group(heads, HeadKind::query, 4, u),
              (Ints{2 * u, 2 * u + 1}));
  }
  EXPECT_EQ(reference::ulysses_head_group(heads, HeadKind::kv, 4, 0), Ints{0});
  EXPECT_EQ(reference::ulysses_head_group(heads, HeadKind::kv, 4, 1), Ints{0});
  EXPECT_EQ(reference::ulysses_head_group(heads, HeadKind::kv, 4, 2), Ints{1});
  EXPECT_EQ(reference::ulysses_head_group(heads, HeadKind::kv, 4, 3), Ints{1});
  // H_kv = U·2: two KV heads each, no repetition.
  EXPECT_EQ(reference::ulysses_head_group({.query = 8, .kv = 4}, HeadKind::kv, 2, 1), (Ints{2, 3}));
}

// L = 8, U = 2, H = 4, d = 1, element (g, h) = 10·g + h: rank 1 gets heads 2 and 3 of every slot.
TEST(UlyssesReference, head_split_by_hand) {
  Tensor global(DType::f32, {1, 8, 4, 1});
  for (std::int64_t g = 0; g < 8; ++g) {
    for (std::int64_t h = 0; h < 4; ++h) global.set(g * 4 + h, static_cast<double>(10 * g + h));
  }
  const Tensor split =
      reference::ulysses_head_split(global, {.query = 4, .kv = 1}, HeadKind::query, 2, 1);
  ASSERT_EQ(split.shape(), (Shape{1, 8, 2, 1}));
  EXPECT_EQ(split.to_vector<float>(),
            (std::vector<float>{2, 3, 12, 13, 22, 23, 32, 33, 42, 43, 52, 53, 62, 63, 72, 73}));
  // One KV head on U = 2: both ranks get it.
  Tensor kv(DType::f32, {1, 8, 1, 1});
  for (std::int64_t g = 0; g < 8; ++g) kv.set(g, static_cast<double>(100 + g));
  for (std::int64_t u = 0; u < 2; ++u) {
    EXPECT_EQ(reference::ulysses_head_split(kv, {.query = 4, .kv = 1}, HeadKind::kv, 2, u), kv);
  }
}

TEST(UlyssesReference, multi_head_attention_uses_each_query_heads_kv_head) {
  const ShardPlan plan =
      reference::plan(make_spec(testsupport::a_plain_layout(), 1), bshd_batch(1, 6));
  Tensor q(DType::f32, {1, 6, 4, 2}), k(DType::f32, {1, 6, 2, 2}), v(DType::f32, {1, 6, 2, 2});
  for (std::int64_t i = 0; i < q.numel(); ++i) q.set(i, 0.1 * static_cast<double>(i % 7) - 0.3);
  for (std::int64_t i = 0; i < k.numel(); ++i) k.set(i, 0.2 * static_cast<double>(i % 5) - 0.4);
  for (std::int64_t i = 0; i < v.numel(); ++i) v.set(i, static_cast<double>(i));
  const Tensor out = reference::multi_head_attention(plan, q, k, v);
  const Tensor zero(DType::f32, {1, 6, 2});
  for (std::int64_t h = 0; h < 4; ++h) {
    const std::int64_t kv = h / 2;  // H / H_kv = 2 query heads per KV head
    const Tensor one =
        reference::attention(plan, reference::head_slice(q, h), reference::head_slice(k, kv),
                             reference::head_slice(v, kv), zero)
            .out;
    EXPECT_EQ(reference::head_slice(out, h), one) << "head " << h;
  }
}

TEST(UlyssesReference, refusals_name_h_and_u) {
  const auto message = [](UlyssesHeads heads, std::int64_t group) {
    try {
      check_ulysses_heads(heads, group);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({.query = 6, .kv = 2}, 4).find("H = 6 query heads do not split over U = 4"),
            std::string::npos);
  EXPECT_NE(message({.query = 8, .kv = 3}, 4).find("not a multiple of H_kv = 3"),
            std::string::npos);
  EXPECT_NE(message({.query = 12, .kv = 6}, 4).find("H_kv = 6 KV heads neither split over U = 4"),
            std::string::npos);
  EXPECT_EQ(message({.query = 8, .kv = 1}, 4), "");
  EXPECT_EQ(message({.query = 8, .kv = 8}, 4), "");
}

}  // namespace
}  // namespace cplab::testing
