// CP attention by schedule (SPEC §13) on the device: ring and all-gather (Ulysses:
// gpu_cp_attention_ulysses.cpp). The schedule says what
// each step computes; this file moves the K/V the steps read and checks, for every step and
// before any byte moves, that the shard the rank will hold is the one the schedule names (a
// schedule and a data movement that disagree are an error, not a silent wrong answer).
//
// Ring: K/V pass to the next rank each step. The backward sends them round again from their
// owners, each shard's dK/dV accumulators (f32) travelling with it, and after the last step hands
// every accumulator to its owner. dQ never leaves the rank. All-gather: one all-gather of K/V, one
// step, and a reduce-scatter of the dK/dV accumulators to their owners.
#include "core/error.hpp"
#include "gpu/host/attention_plan.hpp"
#include "gpu/impl/cp_attention_run.hpp"
#include "gpu/impl/cp_attention_ulysses.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"

namespace cplab::gpu {
namespace {

// Point-to-point messages of one call, told apart by tag and step (comms that match by tag) and
// by order (NCCL, which matches in issue order).
enum Tag : int { kTagK = 1301, kTagV, kTagGradK, kTagGradV, kTagDeliverK, kTagDeliverV };
int tag_of(Tag kind, std::size_t step) { return kind + 8 * static_cast<int>(step); }

struct Inputs {
  const Tensor &q, &k, &v, &grad_out;
  std::int64_t rows, local, heads, kv_heads, head_dim;
};

// The device's own needs of arguments the contract has checked (implementation.cpp): at least one
// head of at least one element, a dtype its kernels take, and schedules built for these tensors
// and this rank's index map (the plans index by the schedule's).
Inputs check_inputs(const ShardLayout& layout, const std::vector<sim::AttentionSchedule>& rows,
                    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& grad_out) {
  const std::int64_t b = layout.rows, len = layout.local_len();
  CPLAB_CHECK(q.size(2) >= 1 && q.size(3) >= 1,
              "gpu cp_attention: q is {}; the kernels need H ≥ 1 heads of d ≥ 1", tensor_brief(q));
  attn_elem(q.dtype());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const sim::AttentionSchedule& s = rows[r];
    CPLAB_CHECK(s.shape.heads == q.size(2) && s.shape.kv_heads == k.size(2) &&
                    s.shape.head_dim == q.size(3) && s.shape.dtype == q.dtype(),
                "gpu cp_attention: row {}'s schedule is for {} / {} heads of {} {}; the tensors "
                "have {} / {} of {} {}",
                r, s.shape.heads, s.shape.kv_heads, s.shape.head_dim, dtype_name(s.shape.dtype),
                q.size(2), k.size(2), q.size(3), dtype_name(q.dtype()));
    CPLAB_CHECK(static_cast<std::int64_t>(s.index.size()) == layout.cp &&
                    s.index[static_cast<std::size_t>(layout.rank)] ==
                        layout.index[static_cast<std::size_t>(r)],
                "gpu cp_attention: row {}'s schedule was not built for this rank's index map", r);
  }
  return {q, k, v, grad_out, b, len, q.size(2), k.size(2), q.size(3)};
}

std::size_t f32_bytes(std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); }

CpAttentionOutput ring(RankContext& ctx, const Inputs& in,
                       const std::vector<sim::AttentionSchedule>& rows) {
  const int cp = ctx.size(), rank = ctx.rank();
  const int next = (rank + 1) % cp, prev = (rank + cp - 1) % cp;
  const std::size_t steps = rows.front().steps.size();
  CPLAB_CHECK(steps >= 1 && steps <= static_cast<std::size_t>(cp),
              "gpu cp_attention: a ring of {} ranks in {} steps", cp, steps);
  const Stream s = ctx.stream();
  const DType dtype = in.q.dtype();
  const auto kv_count = static_cast<std::size_t>(in.k.numel());
  CpAttentionRun run(in.q, in.kv_heads, in.grad_out, rows, s);
  const DeviceBuffer own_k = upload_tensor(in.k, s), own_v = upload_tensor(in.v, s);
  DeviceBuffer held_k(own_k.bytes()), held_v(own_v.bytes()), next_k(own_k.bytes()),
      next_v(own_v.bytes());
  auto restart = [&] {  // the rank's own K/V, as at step 0 of either pass
    copy_bytes(held_k.get(), own_k.get(), own_k.bytes(), s);
    copy_bytes(held_v.get(), own_v.get(), own_v.bytes(), s);
  };
  // One hop of the ring: what the rank holds goes to the next rank, the previous rank's arrives.
  auto pass = [&](DeviceBuffer& held, DeviceBuffer& spare, std::size_t count, DType type, int tag) {
    ctx.send_recv(held, next, spare, prev, count, type, tag);
    std::swap(held, spare);
  };

  // Every step checked and planned before any byte moves: the rank starts with its own shard and
  // each pass() brings the previous rank's, so at step s it holds the shard of rank r - s.
  std::vector<CpAttentionRun::Step> plans;
  std::int64_t holds = rank;
  for (std::size_t step = 0; step < steps; ++step) {
    if (step > 0) holds = (holds + cp - 1) % cp;
    check_step_source(rows, step, rank,
                      {step == 0 ? sim::Exchange::none : sim::Exchange::send_recv}, holds,
                      in.heads);
    plans.push_back(
        run.upload(plan_step(rows, step, rank, HeldKeys::one(cp, holds, in.rows, in.local))));
  }
  restart();
  for (std::size_t step = 0; step < steps; ++step) {
    if (step > 0) {
      pass(held_k, next_k, kv_count, dtype, tag_of(kTagK, step));
      pass(held_v, next_v, kv_count, dtype, tag_of(kTagV, step));
    }
    run.forward(plans[step], held_k, held_v);
  }
  run.finish_forward();

  const auto grad_count = static_cast<std::size_t>(run.kv_elems());
  DeviceBuffer grad_k(f32_bytes(run.kv_elems())), grad_v(f32_bytes(run.kv_elems())),
      next_grad_k(grad_k.bytes()), next_grad_v(grad_v.bytes());
  grad_k.fill_bytes(0, s);
  grad_v.fill_bytes(0, s);
  restart();
  for (std::size_t step = 0; step < steps; ++step) {
    if (step > 0) {
      pass(held_k, next_k, kv_count, dtype, tag_of(kTagK, step));
      pass(held_v, next_v, kv_count, dtype, tag_of(kTagV, step));
      pass(grad_k, next_grad_k, grad_count, DType::f32, tag_of(kTagGradK, step));
      pass(grad_v, next_grad_v, grad_count, DType::f32, tag_of(kTagGradV, step));
    }
    run.backward(plans[step], held_k, held_v, grad_k, grad_v);
  }
  // The accumulators of the shard held last go to its owner, and this rank's own arrive from the
  // rank that held them last: S - 1 hops along the ring either way.
  const auto hops = static_cast<int>(steps) - 1;
  if (hops > 0) {
    const int owner = (rank + cp - hops) % cp, holder = (rank + hops) % cp;
    ctx.send_recv(grad_k, owner, next_grad_k, holder, grad_count, DType::f32, kTagDeliverK);
    ctx.send_recv(grad_v, owner, next_grad_v, holder, grad_count, DType::f32, kTagDeliverV);
    std::swap(grad_k, next_grad_k);
    std::swap(grad_v, next_grad_v);
  }
  return {.out = run.out(),
          .lse = run.lse(),
          .grad_q = run.grad_q(),
          .grad_k = run.kv_grad(grad_k),
          .grad_v = run.kv_grad(grad_v)};
}

CpAttentionOutput all_gather(RankContext& ctx, const Inputs& in,
                             const std::vector<sim::AttentionSchedule>& rows) {
  const int cp = ctx.size(), rank = ctx.rank();
  CPLAB_CHECK(rows.front().steps.size() == 1,
              "gpu cp_attention: an all-gather schedule of {} steps; it has one",
              rows.front().steps.size());
  const Stream s = ctx.stream();
  const DType dtype = in.q.dtype();
  const auto kv_count = static_cast<std::size_t>(in.k.numel());
  CpAttentionRun run(in.q, in.kv_heads, in.grad_out, rows, s);
  // One rank gathers nothing, and a schedule may say so.
  check_step_source(rows, 0, rank,
                    cp == 1
                        ? std::vector<sim::Exchange>{sim::Exchange::all_gather, sim::Exchange::none}
                        : std::vector<sim::Exchange>{sim::Exchange::all_gather},
                    -1, in.heads);
  const CpAttentionRun::Step plan =
      run.upload(plan_step(rows, 0, rank, HeldKeys::all(cp, in.rows, in.local)));
  const DeviceBuffer own_k = upload_tensor(in.k, s), own_v = upload_tensor(in.v, s);
  DeviceBuffer all_k(own_k.bytes() * static_cast<std::size_t>(cp)),
      all_v(own_v.bytes() * static_cast<std::size_t>(cp));
  ctx.all_gather(own_k, all_k, kv_count, dtype);
  ctx.all_gather(own_v, all_v, kv_count, dtype);
  run.forward(plan, all_k, all_v);
  run.finish_forward();

  const std::int64_t all_elems = run.kv_elems() * cp;
  DeviceBuffer all_grad_k(f32_bytes(all_elems)), all_grad_v(f32_bytes(all_elems));
  all_grad_k.fill_bytes(0, s);
  all_grad_v.fill_bytes(0, s);
  run.backward(plan, all_k, all_v, all_grad_k, all_grad_v);
  // Reduce-scattered in the input dtype, as ring-flash-attention's llama3 backward does (SPEC
  // §13.2): each rank's f32 accumulator rounded first.
  const auto grad_count = static_cast<std::size_t>(run.kv_elems());
  const DeviceBuffer send_k = run.rounded(all_grad_k, all_elems),
                     send_v = run.rounded(all_grad_v, all_elems);
  DeviceBuffer grad_k(grad_count * dtype_size(dtype)), grad_v(grad_count * dtype_size(dtype));
  ctx.reduce_scatter(send_k, grad_k, grad_count, dtype, ReduceOp::sum);
  ctx.reduce_scatter(send_v, grad_v, grad_count, dtype, ReduceOp::sum);
  return {.out = run.out(),
          .lse = run.lse(),
          .grad_q = run.grad_q(),
          .grad_k = run.kv_grad_rounded(grad_k),
          .grad_v = run.kv_grad_rounded(grad_v)};
}

}  // namespace

std::string GpuImplementation::cp_attention_unsupported(sim::AttentionAlgo algo) const {
  switch (algo) {
    case sim::AttentionAlgo::ring:
    case sim::AttentionAlgo::all_gather:
    case sim::AttentionAlgo::ulysses:
      return {};
    case sim::AttentionAlgo::usp:
      break;
  }
  return fmt::format("{} runs CP attention by ring, all-gather and ulysses schedules only, not {}",
                     name(), sim::algo_name(algo));
}

CpAttentionOutput GpuImplementation::do_cp_attention(
    Comm& comm, const ShardLayout& layout, const std::vector<sim::AttentionSchedule>& rows,
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& grad_out) {
  RankContext ctx(comm, kind_);
  const Inputs in = check_inputs(layout, rows, q, k, v, grad_out);
  switch (rows.front().algo) {
    case sim::AttentionAlgo::ring:
      return ring(ctx, in, rows);
    case sim::AttentionAlgo::ulysses:
      return cp_attention_ulysses(*this, comm, ctx, layout, rows, q, k, v, grad_out);
    default:
      return all_gather(ctx, in, rows);
  }
}

}  // namespace cplab::gpu
