// gather_token_tensor (SPEC §5): gather∘shard is the identity for every layout and C, trimming
// returns caller coordinates, and the backward gives C× the gradient on owned slots, 0 on padding.
#include "reference/verbs.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::gather_token_tensor;
using reference::gather_token_tensor_backward;
using reference::select_rank;

struct GatherCase {
  std::string layout;
  std::int64_t cp;
  Batch batch;
};

std::vector<GatherCase> gather_cases() {
  std::vector<GatherCase> cases;
  for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 5})) {
    // The rows each nearest to one the layout takes (as the caller pads them for it, or fitted
    // to the lengths it takes).
    const LayoutSpec spec = make_spec(layout, cp);
    if (testsupport::takes_rows(layout, false)) {
      const sim::RowShape row = sim::nearest_accepted(spec, sim::bshd_row(13));
      cases.push_back({layout, cp, bshd_batch(2, row.seq_len)});
    }
    if (testsupport::takes_rows(layout, true)) {
      const sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row({6, 1, 3, 2}, 14));
      cases.push_back({layout, cp, packed_batch({{5, 0, 3, 2}}, row.seq_len, {row.documents})});
    }
  }
  return cases;
}

// A [B, len, features] f32 tensor of distinct values.
Tensor distinct(std::int64_t rows, std::int64_t len, std::int64_t features) {
  Tensor t(DType::f32, {rows, len, features});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i % 251) * 0.5 + 1.0);
  return t;
}

TEST(Gather, AfterShardIsTheIdentity) {
  for (const GatherCase& gc : gather_cases()) {
    SCOPED_TRACE(::testing::Message()
                 << gc.layout << " cp=" << gc.cp << " packed=" << gc.batch.packed());
    const ShardPlan plan = reference::plan(make_spec(gc.layout, gc.cp), gc.batch);
    const RowPlan& row0 = plan.rows[0];
    const std::int64_t rows = gc.batch.rows(), seq = gc.batch.seq_len();
    const Tensor global = distinct(rows, row0.padded_len, 3);
    std::vector<Tensor> locals;
    for (std::int64_t r = 0; r < gc.cp; ++r) locals.push_back(select_rank(plan, global, 1, r));
    EXPECT_EQ(gather_token_tensor(plan, locals, 1, false), global);

    const Tensor caller = distinct(rows, seq, 2);
    locals.clear();
    for (std::int64_t r = 0; r < gc.cp; ++r) {
      locals.push_back(reference::shard_token_tensor(plan, caller, 1, -7.0, r));
    }
    const Tensor trimmed = gather_token_tensor(plan, locals, 1, true);
    ASSERT_EQ(trimmed.shape(), caller.shape());
    // Every caller slot comes back, except the caller's own document padding a layout re-lays.
    std::vector<std::uint8_t> kept(static_cast<std::size_t>(seq), 0);
    for (std::int64_t p : row0.caller_pos) {
      if (p >= 0) kept[p] = 1;
    }
    for (std::int64_t b = 0; b < rows; ++b) {
      for (std::int64_t s = 0; s < seq; ++s) {
        for (std::int64_t e = 0; e < 2; ++e) {
          const std::int64_t at = (b * seq + s) * 2 + e;
          EXPECT_EQ(trimmed.get(at), kept[s] ? caller.get(at) : 0.0) << "b=" << b << " s=" << s;
        }
      }
    }
    if (!gc.batch.packed() || !testsupport::relays_documents(gc.layout, gc.cp)) {
      EXPECT_EQ(trimmed, caller);
    }
  }
}

TEST(Gather, BackwardGivesCTimesOnOwnedSlots) {
  for (const GatherCase& gc : gather_cases()) {
    SCOPED_TRACE(::testing::Message()
                 << gc.layout << " cp=" << gc.cp << " packed=" << gc.batch.packed());
    const ShardPlan plan = reference::plan(make_spec(gc.layout, gc.cp), gc.batch);
    const std::int64_t rows = gc.batch.rows(), seq = gc.batch.seq_len(),
                       len = plan.rows[0].padded_len;
    const double cp = static_cast<double>(gc.cp);
    const Tensor grad = distinct(rows, len, 2);
    const Tensor grad_caller = distinct(rows, seq, 2);
    std::vector<Tensor> summed;
    for (std::int64_t r = 0; r < gc.cp; ++r) {
      const Tensor local = gather_token_tensor_backward(plan, grad, 1, false, r);
      const Tensor local_trim = gather_token_tensor_backward(plan, grad_caller, 1, true, r);
      ASSERT_EQ(local.shape(), (Shape{rows, len / gc.cp, 2}));
      ASSERT_EQ(local_trim.shape(), local.shape());
      for (std::int64_t b = 0; b < rows; ++b) {
        for (std::int64_t k = 0; k < len / gc.cp; ++k) {
          const std::int64_t g = plan.rows[b].index[r][k];
          const std::int64_t p = plan.rows[b].caller_pos[g];
          for (std::int64_t e = 0; e < 2; ++e) {
            const std::int64_t at = (b * (len / gc.cp) + k) * 2 + e;
            EXPECT_EQ(local.get(at), cp * grad.get((b * len + g) * 2 + e));
            EXPECT_EQ(local_trim.get(at),
                      p >= 0 ? cp * grad_caller.get((b * seq + p) * 2 + e) : 0.0);
          }
        }
      }
      summed.push_back(local);
    }
    // Put back where they came from, the owners' gradients are C times the gathered gradient.
    Tensor back = gather_token_tensor(plan, summed, 1, false);
    for (std::int64_t i = 0; i < back.numel(); ++i) EXPECT_EQ(back.get(i), cp * grad.get(i));
  }
}

// The refusals, whatever the layout: a plain one, its L from its plan.
TEST(Gather, RefusesMismatchedShards) {
  const Batch batch = bshd_batch(1, 8);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const std::int64_t len = plan.rows[0].padded_len, local = len / 2;
  const std::string short_shard = std::to_string(local - 1) + " tokens";
  const std::string local_len = "ℓ=L/C=" + std::to_string(len) + "/2=" + std::to_string(local);
  EXPECT_ERROR(gather_token_tensor(plan, {distinct(1, local, 1)}, 1, false), "1 local shards",
               "cp=2");
  EXPECT_ERROR(
      gather_token_tensor(plan, {distinct(1, local, 1), distinct(1, local - 1, 1)}, 1, false),
      "rank 1", short_shard.c_str(), local_len.c_str());
  EXPECT_ERROR(gather_token_tensor_backward(plan, distinct(1, 7, 1), 1, true, 0), "7 tokens",
               "S=8");
  Tensor ids(DType::i64, {1, len});
  EXPECT_ERROR(gather_token_tensor_backward(plan, ids, 1, false, 0), "f32, bf16 or f16");
}

}  // namespace
}  // namespace cplab::testing
