// CP attention by a Ulysses schedule on the device. After the head all-to-all a rank holds the
// whole sequence, in global order, on H/U query heads and their KV heads: the schedule's one step
// is planned over that (gpu/host/attention_plan.hpp's HeldKeys::sequence) and run by the same
// block kernels as the ring.
#include "core/error.hpp"
#include "core/ulysses_heads.hpp"
#include "gpu/host/attention_plan.hpp"
#include "gpu/impl/cp_attention_run.hpp"
#include "gpu/impl/cp_attention_ulysses.hpp"
#include "gpu/impl/token_ops.hpp"
#include "layouts/ulysses_route.hpp"

namespace cplab::gpu {
namespace {

// [B, L, n, 1] view of a [B, L, n] tensor (the all-to-all moves [.., heads, d] slices).
Tensor with_unit_dim(const Tensor& t) { return t.reshaped({t.size(0), t.size(1), t.size(2), 1}); }

// This rank's tokens' dK (or dV), [B, ℓ, H_kv, d] in `dtype`, from its accumulator [B, L, n_kv, d]
// (f32, global order) of the KV heads `mine`: every rank's heads placed in one [B, L, H_kv, d]
// and summed over the group, so ranks that share a repeated KV head add their parts.
Tensor kv_grad(RankContext& ctx, const ShardLayout& layout, const Tensor& acc,
               const std::vector<std::int64_t>& mine, std::int64_t kv_heads, DType dtype) {
  const std::int64_t rows = acc.size(0), len = acc.size(1), n = acc.size(2), d = acc.size(3);
  CPLAB_CHECK(static_cast<std::int64_t>(mine.size()) == n,
              "gpu cp_attention: {} KV heads accumulated, the rank holds {}", n, mine.size());
  std::vector<float> full(static_cast<std::size_t>(rows * len * kv_heads * d), 0.0f);
  const auto from = acc.data<float>();
  for (std::int64_t t = 0; t < rows * len; ++t)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t e = 0; e < d; ++e)
        full[static_cast<std::size_t>((t * kv_heads + mine[static_cast<std::size_t>(j)]) * d + e)] =
            from[static_cast<std::size_t>((t * n + j) * d + e)];
  DeviceBuffer summed = upload_vector(full, ctx.stream());
  ctx.all_reduce(summed, full.size(), DType::f32, ReduceOp::sum);
  full = download_vector<float>(summed, full.size(), ctx.stream());
  const std::int64_t local = layout.local_len(), per_token = kv_heads * d;
  Tensor out(dtype, {rows, local, kv_heads, d});
  for (std::int64_t b = 0; b < rows; ++b)
    for (std::int64_t k = 0; k < local; ++k) {
      const std::int64_t slot =
          layout.index[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)];
      for (std::int64_t x = 0; x < per_token; ++x)
        out.set((b * local + k) * per_token + x,
                full[static_cast<std::size_t>((b * len + slot) * per_token + x)]);
    }
  return out;
}

}  // namespace

CpAttentionOutput cp_attention_ulysses(Implementation& impl, Comm& comm, RankContext& ctx,
                                       const ShardLayout& layout,
                                       const std::vector<sim::AttentionSchedule>& rows,
                                       const Tensor& q, const Tensor& k, const Tensor& v,
                                       const Tensor& grad_out) {
  const int cp = ctx.size(), rank = ctx.rank();
  CPLAB_CHECK(rows.front().steps.size() == 1,
              "gpu cp_attention: a ulysses schedule of {} steps; it has one",
              rows.front().steps.size());
  const UlyssesHeads heads{.query = q.size(2), .kv = k.size(2)};
  const std::int64_t n_q = heads_per_rank(heads, HeadKind::query, cp);  // checks H, H_kv, U
  check_step_source(rows, 0, rank, {sim::Exchange::all_to_all}, -1, n_q);
  const HeldKeys sequence = HeldKeys::sequence(cp, layout.rows, layout.local_len());
  const StepLaunch plan = plan_step(rows, 0, rank, sequence, kAttnTile, &sequence);

  const Tensor q_all = impl.ulysses_all_to_all(comm, layout, q, heads, HeadKind::query);
  const Tensor k_all = impl.ulysses_all_to_all(comm, layout, k, heads, HeadKind::kv);
  const Tensor v_all = impl.ulysses_all_to_all(comm, layout, v, heads, HeadKind::kv);
  const Tensor go_all = impl.ulysses_all_to_all(comm, layout, grad_out, heads, HeadKind::query);
  const Stream s = ctx.stream();
  CpAttentionRun run(q_all, k_all.size(2), go_all, rows, s);
  const CpAttentionRun::Step step = run.upload(plan);
  const DeviceBuffer d_k = upload_tensor(k_all, s), d_v = upload_tensor(v_all, s);
  run.forward(step, d_k, d_v);
  run.finish_forward();
  DeviceBuffer acc_k(static_cast<std::size_t>(run.kv_elems()) * sizeof(float)),
      acc_v(acc_k.bytes());
  acc_k.fill_bytes(0, s);
  acc_v.fill_bytes(0, s);
  run.backward(step, d_k, d_v, acc_k, acc_v);

  const auto back = [&](const Tensor& t) {
    return impl.ulysses_all_to_all_inverse(comm, layout, t, heads, HeadKind::query);
  };
  const Tensor lse = back(with_unit_dim(run.lse()));
  const std::vector<std::int64_t> mine = sim::standard_heads_of(heads, HeadKind::kv, cp, rank);
  const Shape acc_shape = k_all.shape();
  return {.out = back(run.out()),
          .lse = lse.reshaped({lse.size(0), lse.size(1), lse.size(2)}),
          .grad_q = back(run.grad_q()),
          .grad_k = kv_grad(ctx, layout, download_tensor(acc_k, DType::f32, acc_shape, s), mine,
                            heads.kv, q.dtype()),
          .grad_v = kv_grad(ctx, layout, download_tensor(acc_v, DType::f32, acc_shape, s), mine,
                            heads.kv, q.dtype())};
}

}  // namespace cplab::gpu
