// The gpu implementation against the reference for every layout, C and batch shape of the sim
// tests (tests/sim/support.hpp): shard (both pad policies), the later primary, shard_token_tensor,
// gather and its backward, gather_tokens, the shifted loss and attention. Comms: device-sim (the
// default `gpu`), and the host-staged and NCCL variants where they apply.
#include "gpu/implementation.hpp"

#include <mutex>

#include "gpu_test.hpp"
#include "loss_check.hpp"
#include "reference/attention.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::simtest {
namespace {

class GpuImplementationTest : public gputest::GpuParamTest<LayoutCp> {};

// Problems found on the ranks, collected under a lock and reported once.
struct Problems {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(bool ok, const std::string& what) {
    if (ok) return;
    std::lock_guard lock(mutex);
    list.push_back(what);
  }
};

// The packed row {5, 3, 8} of 16 slots, or the row nearest to it that the layout takes at C.
Batch accepted_row(const std::string& layout, std::int64_t cp) {
  const sim::RowShape row =
      sim::nearest_accepted(spec_for(layout, cp), sim::packed_row({5, 3, 8}, 16));
  return packed_batch({{5, 3, 8}}, row.seq_len, {row.documents});
}

Tensor wave(Shape shape, double phase) {
  Tensor t(DType::f32, std::move(shape));
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::sin(0.61 * static_cast<double>(i) + phase));
  return t;
}

TEST_P(GpuImplementationTest, shard_equals_reference_for_both_pad_policies_and_later_primary) {
  const auto gpu = gpu::make_gpu_implementation();
  for_each_plannable_case(GetParam(), [&](LayoutSpec spec, const Batch& batch, const ShardPlan&) {
    spec.pad_token_id = 9;
    for (PadPolicy policy : {PadPolicy::spec, PadPolicy::zero}) {
      for (bool at_once : {true, false}) {
        spec.pad_policy = policy;
        spec.shard_primary = at_once;
        const auto expected = reference::shard_batch(reference::plan(spec, batch), batch);
        LayoutSpec all_at_once = spec;
        all_at_once.shard_primary = true;
        const auto expected_primary =
            reference::shard_batch(reference::plan(all_at_once, batch), batch);
        Problems problems;
        on_every_rank(
            spec, batch,
            [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
              for (std::size_t m = 0; m < shards.size(); ++m) {
                const Batch& want = expected[m][ctx.rank];
                for (const auto& [name, field] : want.tokens) {
                  const bool same =
                      shards[m].local.has(name) && shards[m].local.at(name) == field.value;
                  problems.add(same, name + " of microbatch " + std::to_string(m) + " rank " +
                                         std::to_string(ctx.rank));
                }
                if (!at_once) {
                  const Tensor later =
                      gpu->shard_primary_later(ctx.comm, shards[m].layout, shards[m].local);
                  problems.add(later == expected_primary[m][ctx.rank].at(batch.primary()),
                               "primary sharded later, rank " + std::to_string(ctx.rank));
                }
              }
            },
            gpu.get());
        EXPECT_TRUE(problems.list.empty())
            << (policy == PadPolicy::zero ? "zero policy " : "spec policy ")
            << ::testing::PrintToString(problems.list);
      }
    }
  });
}

TEST_P(GpuImplementationTest, token_tensors_shard_and_gather_like_the_reference) {
  const auto gpu = gpu::make_gpu_implementation();
  for_each_plannable_case(GetParam(), [&](const LayoutSpec& spec, const Batch& batch,
                                          const ShardPlan& plan) {
    Problems problems;
    on_every_rank(
        spec, batch,
        [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          for (std::size_t m = 0; m < shards.size(); ++m) {
            const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
            const ShardLayout& layout = shards[m].layout;
            const std::string at =
                " (microbatch " + std::to_string(m) + " rank " + std::to_string(ctx.rank) + ")";
            const Tensor padded = located(DType::f32, {layout.rows, layout.padded_len, 2});
            const Tensor caller = located(DType::bf16, {layout.rows, layout.caller_len, 3});
            const Tensor a = gpu->shard_token_tensor(ctx.comm, layout, padded, 1, std::nullopt);
            const Tensor b = gpu->shard_token_tensor(ctx.comm, layout, caller, 1, -1.5);
            problems.add(
                a == reference::shard_token_tensor(part, padded, 1, std::nullopt, ctx.rank),
                "padded length" + at);
            problems.add(b == reference::shard_token_tensor(part, caller, 1, -1.5, ctx.rank),
                         "caller length" + at);
            const std::vector<Tensor> all_b = [&] {
              std::vector<Tensor> v;
              for (std::int64_t r = 0; r < spec.cp; ++r)
                v.push_back(reference::shard_token_tensor(part, caller, 1, -1.5, r));
              return v;
            }();
            problems.add(gpu->gather_token_tensor(ctx.comm, layout, b, 1, true) ==
                             reference::gather_token_tensor(part, all_b, 1, true),
                         "trimmed gather" + at);
            problems.add(gpu->gather_token_tensor(ctx.comm, layout, b, 1, false) ==
                             reference::gather_token_tensor(part, all_b, 1, false),
                         "global gather" + at);
            const Tensor grad_global = wave({layout.rows, layout.padded_len, 2}, 0.3);
            const Tensor grad_caller = wave({layout.rows, layout.caller_len, 2}, 0.7);
            problems.add(closeness(gpu->gather_token_tensor_backward(ctx.comm, layout, grad_global,
                                                                     1, false),
                                   reference::gather_token_tensor_backward(part, grad_global, 1,
                                                                           false, ctx.rank)) <= 1.0,
                         "global gather backward" + at);
            problems.add(
                closeness(gpu->gather_token_tensor_backward(ctx.comm, layout, grad_caller, 1, true),
                          reference::gather_token_tensor_backward(part, grad_caller, 1, true,
                                                                  ctx.rank)) <= 1.0,
                "trimmed gather backward" + at);
          }
        },
        gpu.get());
    EXPECT_TRUE(problems.list.empty()) << ::testing::PrintToString(problems.list);
  });
}

TEST_P(GpuImplementationTest, shifted_loss_and_gradient_equal_the_reference) {
  const auto gpu = gpu::make_gpu_implementation();
  for_each_plannable_case(GetParam(),
                          [&](const LayoutSpec& spec, const Batch& batch, const ShardPlan&) {
                            EXPECT_EQ(check_loss_against_reference(spec, batch, gpu.get()), "");
                          });
}

TEST_P(GpuImplementationTest, attention_rows_and_gradients_equal_the_unsharded_computation) {
  const auto gpu = gpu::make_gpu_implementation();
  for_each_plannable_case(GetParam(), [&](const LayoutSpec& spec, const Batch& batch,
                                          const ShardPlan& plan) {
    Problems problems;
    const std::int64_t head = 4;
    on_every_rank(
        spec, batch,
        [&](sim::RankContext& ctx, std::vector<RankShard>& shards) {
          for (std::size_t m = 0; m < shards.size(); ++m) {
            const ShardPlan part = reference::microbatch_plan(plan, static_cast<std::int64_t>(m));
            const ShardLayout& layout = shards[m].layout;
            const Shape shape = {layout.rows, layout.padded_len, head};
            const Tensor q = wave(shape, 0.1), k = wave(shape, 1.3), v = wave(shape, 2.9),
                         dout = wave(shape, 4.2);
            const reference::AttentionReference ref = reference::attention(part, q, k, v, dout);
            auto mine = [&](const Tensor& t) {
              return reference::select_rank(part, t, 1, ctx.rank);
            };
            const AttentionOutput out =
                gpu->attention(ctx.comm, layout, mine(q), mine(k), mine(v), mine(dout));
            const std::string at =
                " (microbatch " + std::to_string(m) + " rank " + std::to_string(ctx.rank) + ")";
            problems.add(closeness(out.out, mine(ref.out), 1e-4, 1e-5) <= 1.0, "out" + at);
            problems.add(closeness(out.grad_q, mine(ref.grad_q), 1e-4, 1e-5) <= 1.0, "grad_q" + at);
            problems.add(closeness(out.grad_k, mine(ref.grad_k), 1e-4, 1e-5) <= 1.0, "grad_k" + at);
            problems.add(closeness(out.grad_v, mine(ref.grad_v), 1e-4, 1e-5) <= 1.0, "grad_v" + at);
          }
        },
        gpu.get());
    EXPECT_TRUE(problems.list.empty()) << ::testing::PrintToString(problems.list);
  });
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, GpuImplementationTest,
                         ::testing::ValuesIn(every_layout_and_cp()), layout_cp_name);

class GpuImplementationComms : public gputest::GpuTest {};

TEST_F(GpuImplementationComms, gather_tokens_keeps_rank_order_and_sums_gradients_to_owners) {
  const auto gpu = gpu::make_gpu_implementation();
  for (int cp : {1, 3, 4}) {
    sim::World world(cp);
    Problems problems;
    world.run([&](sim::RankContext& ctx) {
      Tensor local(DType::f32, {2, 3});
      for (std::int64_t i = 0; i < 6; ++i) local.set(i, 10.0 * ctx.rank + static_cast<double>(i));
      const Tensor all = gpu->gather_tokens(ctx.comm, local);
      bool ordered = all.size(0) == 2 * cp;
      for (std::int64_t i = 0; ordered && i < all.numel(); ++i)
        ordered = all.get(i) == 10.0 * static_cast<double>(i / 6) + static_cast<double>(i % 6);
      problems.add(ordered, "gather_tokens order on rank " + std::to_string(ctx.rank));
      const Tensor back =
          gpu->gather_tokens_backward(ctx.comm, all);  // every rank the same: C× its own slice
      bool summed = true;
      for (std::int64_t i = 0; i < 6; ++i)
        summed = summed && back.get(i) == static_cast<double>(cp) * local.get(i);
      problems.add(summed, "gather_tokens backward on rank " + std::to_string(ctx.rank));
    });
    EXPECT_TRUE(problems.list.empty())
        << "cp " << cp << ": " << ::testing::PrintToString(problems.list);
  }
}

TEST_F(GpuImplementationComms, host_staged_and_nccl_comms_give_the_same_loss) {
  const auto host = gpu::make_gpu_implementation(gpu::GpuCommKind::host);
  EXPECT_EQ(host->name(), "gpu-host");
  for (const auto& [layout, cp] : testsupport::layouts_at({3})) {
    if (!testsupport::takes_rows(layout, true)) continue;
    EXPECT_EQ(
        check_loss_against_reference(spec_for(layout, cp), accepted_row(layout, cp), host.get()),
        "")
        << layout;
  }
  const auto nccl = gpu::make_gpu_implementation(gpu::GpuCommKind::nccl);
  EXPECT_EQ(nccl->name(), "gpu-nccl");
  // NCCL needs a GPU per rank: one rank, and as many ranks as this machine has GPUs.
  std::vector<std::int64_t> cps = {1};
  if (gpu::device_count() > 1) cps.push_back(gpu::device_count());
  for (const auto& [layout, cp] : testsupport::layouts_at(cps)) {
    if (!testsupport::takes_rows(layout, true)) continue;
    {
      EXPECT_EQ(
          check_loss_against_reference(spec_for(layout, cp), accepted_row(layout, cp), nccl.get()),
          "")
          << layout << " cp " << cp;
    }
  }
}

TEST(GpuImplementationAvailability, available_exactly_when_a_device_is_usable) {
  const auto gpu = gpu::make_gpu_implementation();
  EXPECT_EQ(gpu->name(), "gpu");
  EXPECT_EQ(gpu->available(), gpu::device_count() > 0);
  if (!gpu->available()) {
    EXPECT_EQ(gpu->why_unavailable().rfind("no CUDA device", 0), 0u) << gpu->why_unavailable();
  }
}

}  // namespace
}  // namespace cplab::simtest
