// CP attention forward + backward through the twin (SimImplementation::cp_attention on every rank
// of a ThreadComm World, ranks = threads) on one causal row [1, L, H, d] f32 of the first causally
// balanced layout (bench_layouts.hpp: head-tail today):
//   BM_cpu_ring_attention  the ring schedule (zigzag), against the all-gather schedule of the
//                          same row and heads, equal work (the same pairs × heads), as the
//                          same-process baseline (ratio_to_baseline = all-gather seconds / ring
//                          seconds), and against libtorch's unsharded attention math (matmul,
//                          masked softmax, matmul and autograd) at the same thread count.
// Timed in CPU seconds of the process; the baselines run once after every iteration, untimed by
// the loop, and each side's best run is compared. After timing, the ring's outputs and gradients
// are checked against the double reference (and libtorch's, where it is built).
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "attention/schedule.hpp"
#include "bench/bench_layouts.hpp"
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "bench/torch_baseline.hpp"
#include "comm/thread_comm.hpp"
#include "core/token_moves.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/cp_attention_reference.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::bench {
namespace {

// The row as the reference plans it: the partition's maps, one document, every slot real.
RowPlan row_plan(const RowPartition& part) {
  RowPlan row;
  row.cp = part.cp;
  row.padded_len = part.padded_len;
  row.caller_len = part.padded_len;
  row.original_len = part.padded_len;
  for (const ShardLayout& r : part.ranks) row.index.push_back(r.index[0]);
  row.doc_ids.assign(static_cast<std::size_t>(part.padded_len), 1);
  row.real.assign(static_cast<std::size_t>(part.padded_len), 1);
  return row;
}

struct Problem {
  RowPartition part;
  RowPlan row;
  Tensor q, k, v, grad_out;  // global [1, L, H, d]
  std::vector<Tensor> lq, lk, lv, lg;
};

Problem make_problem(std::int64_t cp, std::int64_t len, std::int64_t heads, std::int64_t d) {
  Problem p;
  p.part = partition_row(a_balanced_layout(), cp, len);
  p.row = row_plan(p.part);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.grad_out}) {
    *t = Tensor(DType::f32, {1, p.part.padded_len, heads, d}, Uninitialized{});
    for (float& x : t->data<float>()) x = unit(rng);
  }
  for (const ShardLayout& r : p.part.ranks) {
    p.lq.push_back(take_tokens(p.q, 1, r.index, r.local_len()));
    p.lk.push_back(take_tokens(p.k, 1, r.index, r.local_len()));
    p.lv.push_back(take_tokens(p.v, 1, r.index, r.local_len()));
    p.lg.push_back(take_tokens(p.grad_out, 1, r.index, r.local_len()));
  }
  return p;
}

std::vector<sim::AttentionSchedule> schedules(const Problem& p, sim::AttentionAlgo algo,
                                              std::int64_t heads, std::int64_t d) {
  LayoutSpec spec;
  spec.layout = p.part.layout;
  spec.cp = p.part.cp;
  const sim::AttentionShape shape{
      .heads = heads, .kv_heads = heads, .head_dim = d, .dtype = DType::f32};
  return {sim::build_schedule(sim::layout_descriptor(spec.layout), spec, p.row, algo, shape)};
}

// Forward + backward on every rank; CPU seconds of the process.
double run_twin(sim::World& world, sim::SimImplementation& impl, const Problem& p,
                const std::vector<sim::AttentionSchedule>& rows,
                std::vector<CpAttentionOutput>& outputs) {
  const double start = process_cpu_seconds();
  world.run([&](sim::RankContext& ctx) {
    const auto r = static_cast<std::size_t>(ctx.rank);
    outputs[r] =
        impl.cp_attention(ctx.comm, p.part.ranks[r], rows, p.lq[r], p.lk[r], p.lv[r], p.lg[r]);
  });
  return process_cpu_seconds() - start;
}

// The largest |twin - expected| over every rank's output and gradients, relative to the largest
// |expected| of each part; expected(part, slot, h, e) in global coordinates.
template <typename Expected>
double worst_relative_error(const Problem& p, const std::vector<CpAttentionOutput>& outputs,
                            std::int64_t heads, std::int64_t d, Expected&& expected) {
  double worst = 0.0;
  for (int part = 0; part < 4; ++part) {
    double err = 0.0, scale = 0.0;
    for (std::size_t r = 0; r < outputs.size(); ++r) {
      const Tensor* got[] = {&outputs[r].out, &outputs[r].grad_q, &outputs[r].grad_k,
                             &outputs[r].grad_v};
      const auto& index = p.part.ranks[r].index[0];
      for (std::size_t t = 0; t < index.size(); ++t) {
        for (std::int64_t h = 0; h < heads; ++h) {
          for (std::int64_t e = 0; e < d; ++e) {
            const double want = expected(part, index[t], h, e);
            const auto at = (static_cast<std::int64_t>(t) * heads + h) * d + e;
            err = std::max(err, std::abs(got[part]->get(at) - want));
            scale = std::max(scale, std::abs(want));
          }
        }
      }
    }
    worst = std::max(worst, err / std::max(scale, 1e-30));
  }
  return worst;
}

void BM_cpu_ring_attention(benchmark::State& state) {
  const auto threads = static_cast<std::int64_t>(state.range(0));
  const std::int64_t len = state.range(1), heads = state.range(2), d = state.range(3);
  const Problem p = make_problem(threads, len, heads, d);
  const auto ring = schedules(p, sim::AttentionAlgo::ring, heads, d);
  const auto gathered = schedules(p, sim::AttentionAlgo::all_gather, heads, d);
  std::optional<TorchAttention> torch;
  if (torch_available()) {
    torch.emplace(p.q.data<float>().data(), p.k.data<float>().data(), p.v.data<float>().data(),
                  p.grad_out.data<float>().data(), p.part.padded_len, heads, d,
                  static_cast<int>(threads));
  }
  sim::SimImplementation impl;
  sim::World world(static_cast<int>(threads));
  std::vector<CpAttentionOutput> outputs(static_cast<std::size_t>(threads)),
      gathered_outputs(outputs.size());
  std::vector<double> ring_seconds, gathered_seconds, torch_seconds;
  for (auto _ : state) {
    ring_seconds.push_back(run_twin(world, impl, p, ring, outputs));
    state.PauseTiming();
    gathered_seconds.push_back(run_twin(world, impl, p, gathered, gathered_outputs));
    if (torch) torch_seconds.push_back(torch->run().cpu_seconds);
    state.ResumeTiming();
  }
  const auto best = [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  };
  const double ring_best = best(ring_seconds);
  std::int64_t bytes = 0;
  for (const sim::ScheduleStep& step : ring[0].steps) {
    for (const sim::RankStep& rs : step.ranks) bytes += rs.bytes_sent + rs.backward_bytes_sent;
  }
  state.SetBytesProcessed(bytes * static_cast<std::int64_t>(state.iterations()));
  state.SetItemsProcessed(ring[0].total_work * static_cast<std::int64_t>(state.iterations()));
  state.counters["cpu_seconds"] = ring_best;
  state.counters["all_gather_cpu_seconds"] = best(gathered_seconds);
  state.counters["ratio_to_baseline"] = best(gathered_seconds) / ring_best;
  state.counters["critical_path_ratio"] =
      static_cast<double>(ring[0].critical_path) / std::max(ring[0].ideal, 1.0);
  // The output check: the ring against the double reference, the all-gather form likewise.
  ShardPlan plan;
  plan.rows = {p.row};
  const auto ref = reference::cp_attention_reference(plan, p.q, p.k, p.v, p.grad_out);
  const auto from_ref = [&](int part, std::int64_t slot, std::int64_t h, std::int64_t e) {
    const std::vector<double>* of[] = {&ref.out, &ref.grad_q, &ref.grad_k, &ref.grad_v};
    return (*of[part])[static_cast<std::size_t>((slot * heads + h) * d + e)];
  };
  // f32 against double over sums of up to L terms: a few thousand ulps at most.
  const double tol = 1e-3;
  if (worst_relative_error(p, outputs, heads, d, from_ref) > tol ||
      worst_relative_error(p, gathered_outputs, heads, d, from_ref) > tol) {
    state.SkipWithError("ring attention: an output or gradient differs from the reference");
    return;
  }
  if (!torch) {
    state.SetLabel("baseline: the all-gather schedule (no libtorch in this build)");
    return;
  }
  state.counters["libtorch_cpu_seconds"] = best(torch_seconds);
  state.counters["libtorch_ratio"] = best(torch_seconds) / ring_best;
  state.SetLabel("baseline: the all-gather schedule; libtorch attention math at equal threads");
  const std::vector<float> parts[] = {torch->out(), torch->grad(0), torch->grad(1), torch->grad(2)};
  const auto from_torch = [&](int part, std::int64_t slot, std::int64_t h, std::int64_t e) {
    return static_cast<double>(parts[part][static_cast<std::size_t>((slot * heads + h) * d + e)]);
  };
  if (worst_relative_error(p, outputs, heads, d, from_torch) > tol) {
    state.SkipWithError("ring attention: an output or gradient differs from libtorch's");
  }
}

}  // namespace

void register_attention_benchmarks() {
  // One causal row of 1024 tokens, 4 heads of 64; ranks (threads) 2 and 4.
  benchmark::RegisterBenchmark("BM_cpu_ring_attention", BM_cpu_ring_attention)
      ->ArgNames({"threads", "L", "H", "d"})
      ->Args({2, 1024, 4, 64})
      ->Args({4, 1024, 4, 64})
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
