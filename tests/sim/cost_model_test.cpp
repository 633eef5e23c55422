// The cost model: causal work per rank equals the reference's counting for every layout and C;
// its predicted bytes per verb equal what ThreadComm counts when the sim runs the verb; SPEC §9's
// work figures, including the document-major THD bug's imbalance.
#include "sim/cost_model.hpp"

#include <gtest/gtest.h>

#include <mutex>

#include "reference/work.hpp"
#include "sim/index_math.hpp"
#include "sim_runner.hpp"

namespace cplab::simtest {
namespace {

class CostModelTest : public ::testing::TestWithParam<LayoutCp> {};

TEST_P(CostModelTest, causal_work_equals_reference_counting) {
  const auto& [layout, cp] = GetParam();
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    ShardPlan plan;
    if (!error_of([&] { plan = reference::plan(spec, c.batch); }).empty()) continue;
    const auto micro = sim::microbatch_rows(spec, c.batch);
    for (std::int64_t m = 0; m < spec.microbatches; ++m) {
      const auto costs = sim::rank_costs(spec, micro[m]);
      std::vector<std::int64_t> expected(static_cast<std::size_t>(cp), 0),
          valid(static_cast<std::size_t>(cp), 0);
      for (std::int64_t b = 0; b < plan.rows_per_microbatch(); ++b) {
        const RowPlan& row =
            plan.rows[static_cast<std::size_t>(m * plan.rows_per_microbatch() + b)];
        const auto work = reference::causal_work(row);
        for (std::int64_t r = 0; r < cp; ++r) {
          expected[r] += work[r];
          valid[r] += row.valid_tokens[r];
        }
      }
      for (std::int64_t r = 0; r < cp; ++r) {
        EXPECT_EQ(costs[r].causal_work, expected[r]) << "microbatch " << m << " rank " << r;
        EXPECT_EQ(costs[r].valid_tokens, valid[r]) << "microbatch " << m << " rank " << r;
      }
    }
  }
}

// Runs one verb per World and reads what each rank sent.
TEST_P(CostModelTest, predicted_bytes_equal_measured_bytes) {
  const auto& [layout, cp] = GetParam();
  const sim::CostShapes shapes{.token_elements = 3, .element_bytes = 4, .head_dim = 2};
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    if (!error_of([&] { reference::plan(spec, c.batch); }).empty()) continue;
    const auto micro = sim::microbatch_rows(spec, c.batch);
    const auto costs = sim::rank_costs(spec, micro[0], shapes);
    const std::vector<std::string> verbs = {
        "shard",         "gather_token_tensor",    "gather_token_tensor_backward",
        "gather_tokens", "gather_tokens_backward", "shifted_cp_loss",
        "attention"};
    for (const std::string& verb : verbs) {
      SCOPED_TRACE(verb);
      sim::World world(static_cast<int>(cp));
      sim::SimImplementation sim;
      world.run([&](sim::RankContext& ctx) {
        const RankShard shard = sim.shard(ctx.comm, spec, c.batch)[0];
        const ShardLayout& lay = shard.layout;
        const Tensor tokens(DType::f32, {lay.rows, lay.local_len(), 3});
        const Tensor one_row(DType::f32, {lay.local_len(), 3});
        const Tensor qkv(DType::f32, {lay.rows, lay.local_len(), 2});
        if (verb == "gather_token_tensor") sim.gather_token_tensor(ctx.comm, lay, tokens, 1, false);
        if (verb == "gather_token_tensor_backward") {
          sim.gather_token_tensor_backward(
              ctx.comm, lay, Tensor(DType::f32, {lay.rows, lay.padded_len, 3}), 1, false);
        }
        if (verb == "gather_tokens") {
          for (std::int64_t b = 0; b < lay.rows; ++b) sim.gather_tokens(ctx.comm, one_row);
        }
        if (verb == "gather_tokens_backward") {
          for (std::int64_t b = 0; b < lay.rows; ++b)
            sim.gather_tokens_backward(ctx.comm, Tensor(DType::f32, {cp * lay.local_len(), 3}));
        }
        if (verb == "shifted_cp_loss") {
          sim.shifted_cp_loss(ctx.comm, lay, Tensor(DType::f32, {lay.rows, lay.local_len(), 11}),
                              shard.local.at(keys::labels), Tensor());
        }
        if (verb == "attention") sim.attention(ctx.comm, lay, qkv, qkv, qkv, qkv);
      });
      for (std::int64_t r = 0; r < cp; ++r) {
        const sim::VerbBytes& v = costs[r].bytes;
        const std::uint64_t predicted =
            verb == "shard"                          ? v.shard
            : verb == "gather_token_tensor"          ? v.gather_token_tensor
            : verb == "gather_token_tensor_backward" ? v.gather_token_tensor_backward
            : verb == "gather_tokens"                ? v.gather_tokens
            : verb == "gather_tokens_backward"       ? v.gather_tokens_backward
            : verb == "shifted_cp_loss"              ? v.loss_exchange + v.loss_count
                                                     : v.attention;
        EXPECT_EQ(world.bytes_sent()[r], predicted) << "rank " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, CostModelTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

sim::MicrobatchRows one_row(std::int64_t len, std::vector<std::int64_t> docs = {}) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  rows.packed = !docs.empty();
  rows.seq_lens = std::move(docs);
  return rows;
}

std::vector<std::int64_t> work_of(const std::vector<sim::RankCost>& costs) {
  std::vector<std::int64_t> work;
  for (const auto& cost : costs) work.push_back(cost.causal_work);
  return work;
}

TEST(CostModelExamples, head_tail_balances_a_causal_row) {
  EXPECT_EQ(work_of(sim::rank_costs(spec_for("head-tail", 4), one_row(16))),
            (Ints{34, 34, 34, 34}));
  EXPECT_DOUBLE_EQ(sim::work_imbalance(sim::rank_costs(spec_for("head-tail", 4), one_row(16))),
                   1.0);
}

// SPEC §9 example 4's known bug: per-document chunk lists concatenated document-major (doc i:
// rank 0's two chunks, rank 1's, ...) and the flattened stream cut into C equal pieces.
class DocumentMajorThd : public sim::PartitionRules {
 public:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    const Ints& bounds = stream.doc_bounds;
    Ints flat;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const std::int64_t len = bounds[i + 1] - bounds[i];
      const sim::LayoutMap one(map.layout(), cp, len, MapParams{.table = {0, len}});
      for (std::int64_t r = 0; r < cp; ++r) {
        for (std::int64_t g : one.local_index(r)) flat.push_back(bounds[i] + g);
      }
    }
    const std::int64_t piece = bounds.back() / cp;
    return Ints(flat.begin() + rank * piece, flat.begin() + (rank + 1) * piece);
  }
};

TEST(CostModelExamples, thd_balances_documents_and_document_major_does_not) {
  EXPECT_EQ(work_of(sim::rank_costs(spec_for("thd", 2), one_row(16, {4, 12}))), (Ints{44, 44}));
  EXPECT_EQ(
      work_of(sim::rank_costs(spec_for("thd", 2), one_row(16, {4, 12}), {}, DocumentMajorThd{})),
      (Ints{26, 62}));
}

}  // namespace
}  // namespace cplab::simtest
