// Device suite, CP attention by schedule (SPEC §13): one forward and backward of a row's ring (or
// all-gather) schedule on C device-sim ranks of one GPU, against one unsharded attention of the
// same row on one rank: the same kernels and the same pairs, so ratio_to_baseline (unsharded
// seconds / CP seconds) is what sharding the row costs or saves on one GPU, and
// cp_over_unsharded its inverse. Both are timed on the host clock between barriers, uploads and
// downloads included (the Implementation interface takes host tensors). Then the KV exchange of
// one ring step is timed alone at the same sizes: busbw as nccl-tests defines it for a
// point-to-point exchange (= algbw). After timing, every rank's outputs are checked against the
// unsharded run's and the exchanged bytes against their senders'; a mismatch fails the benchmark.
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_layouts.hpp"
#include "bench/gpu_bench.hpp"
#include "gpu/comm/device_sim_comm.hpp"
#include "gpu/host/attention_plan.hpp"
#include "gpu/implementation.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"

namespace cplab::bench {
namespace {

// A zigzag ring: the layout production pairs with ring attention, the first causally balanced one
// (bench_layouts.hpp: head-tail today).
const std::string& balanced_layout() {
  static const std::string layout = a_balanced_layout();
  return layout;
}
constexpr int kExchangeReps = 4;

// One row of `len` tokens sharded on `cp` ranks: its schedule and what each rank holds.
struct AttentionRow {
  RowPlan plan;
  std::vector<sim::AttentionSchedule> schedule;  // one row
  std::vector<ShardLayout> layouts;              // [C]
};

ShardLayout rank_layout(const RowPlan& plan, std::int64_t r) {
  ShardLayout l;
  l.layout = balanced_layout();
  l.cp = plan.cp;
  l.rank = r;
  l.padded_len = plan.padded_len;
  l.original_len = plan.original_len;
  l.caller_len = plan.caller_len;
  l.rows = 1;
  const auto& index = plan.index[static_cast<std::size_t>(r)];
  l.index = {index};
  auto& caller = l.caller_pos.emplace_back();
  auto& positions = l.positions.emplace_back();
  auto& docs = l.doc_ids.emplace_back();
  auto& real = l.real.emplace_back();
  for (const std::int64_t g : index) {
    const auto s = static_cast<std::size_t>(g);
    caller.push_back(plan.caller_pos[s]);
    positions.push_back(plan.positions[s]);
    docs.push_back(plan.doc_ids[s]);
    real.push_back(plan.real[s]);
  }
  l.valid_tokens = {plan.valid_tokens[static_cast<std::size_t>(r)]};
  check_recorded_layout(l, "BM_gpu_cp_attention");
  return l;
}

AttentionRow attention_row(std::int64_t cp, std::int64_t len, sim::AttentionAlgo algo,
                           const sim::AttentionShape& shape) {
  LayoutSpec spec;
  spec.layout = balanced_layout();
  spec.cp = cp;
  AttentionRow row;
  row.plan = reference::plan_row(spec, len);
  row.schedule = {
      sim::build_schedule(sim::layout_descriptor(balanced_layout()), spec, row.plan, algo, shape)};
  for (std::int64_t r = 0; r < cp; ++r) row.layouts.push_back(rank_layout(row.plan, r));
  return row;
}

// Global [1, L, heads, d] inputs, a pure function of (tensor, slot, head, e), in `dtype`.
Tensor global_input(int tensor, std::int64_t len, std::int64_t heads, std::int64_t d, DType dtype) {
  Tensor t(dtype, {1, len, heads, d});
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::sin(0.013 * static_cast<double>(i) + 1.7 * tensor));
  return t;
}

// Rank r's local [1, ℓ, heads, d]: its slots of the global tensor, in local order.
Tensor local_of(const Tensor& global, const std::vector<std::int64_t>& index) {
  const std::int64_t per_token = global.size(2) * global.size(3);
  Tensor t(global.dtype(),
           {1, static_cast<std::int64_t>(index.size()), global.size(2), global.size(3)});
  const std::size_t bytes = static_cast<std::size_t>(per_token) * dtype_size(global.dtype());
  for (std::size_t k = 0; k < index.size(); ++k)
    std::memcpy(t.raw() + k * bytes, global.raw() + static_cast<std::size_t>(index[k]) * bytes,
                bytes);
  return t;
}

struct Inputs {
  Tensor q, k, v, grad_out;
};

// Runs the row's schedule on every rank of `world`; rank 0's wall seconds between barriers.
double run_row(gpu::DeviceSimWorld& world, Implementation& gpu, const AttentionRow& row,
               const std::vector<Inputs>& local, std::vector<CpAttentionOutput>& out) {
  double seconds = 0.0;
  world.run([&](gpu::DeviceSimComm& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    const Inputs& in = local[r];
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    out[r] = gpu.cp_attention(comm, row.layouts[r], row.schedule, in.q, in.k, in.v, in.grad_out);
    comm.barrier();
    if (r == 0) seconds = seconds_since(start);
  });
  return seconds;
}

// "" when every rank's outputs match the unsharded run's at the same slots, else the first
// mismatch. Both ran the same kernels; they differ by the order of merges and accumulations and
// by the block outputs' rounding to the input dtype, so the bound of the outputs and gradients is
// the dtype's (`tol`), while the LSE, all f32 and never rounded, must agree to f32's order.
std::string compare(const AttentionRow& row, const std::vector<CpAttentionOutput>& cp,
                    const AttentionRow& whole, const CpAttentionOutput& one, double tol) {
  constexpr double kLseTol = 1e-4;
  std::vector<std::int64_t> at_slot(static_cast<std::size_t>(whole.plan.padded_len));
  const auto& whole_index = whole.plan.index[0];
  for (std::size_t k = 0; k < whole_index.size(); ++k)
    at_slot[static_cast<std::size_t>(whole_index[k])] = static_cast<std::int64_t>(k);
  const std::pair<const char*, Tensor CpAttentionOutput::*> fields[] = {
      {"out", &CpAttentionOutput::out},
      {"lse", &CpAttentionOutput::lse},
      {"grad_q", &CpAttentionOutput::grad_q},
      {"grad_k", &CpAttentionOutput::grad_k},
      {"grad_v", &CpAttentionOutput::grad_v}};
  for (std::size_t r = 0; r < cp.size(); ++r) {
    const auto& index = row.plan.index[r];
    for (const auto& [name, field] : fields) {
      const Tensor& got = cp[r].*field;
      const Tensor& want = one.*field;
      const std::int64_t per_token = got.numel() / static_cast<std::int64_t>(index.size());
      for (std::size_t k = 0; k < index.size(); ++k)
        for (std::int64_t x = 0; x < per_token; ++x) {
          const double g = got.get(static_cast<std::int64_t>(k) * per_token + x);
          const double w = want.get(at_slot[static_cast<std::size_t>(index[k])] * per_token + x);
          const double bound =
              (field == &CpAttentionOutput::lse ? kLseTol : tol) * (1 + std::abs(w));
          const bool same = (std::isinf(w) && g == w) || std::abs(g - w) <= bound;
          if (!same)
            return "rank " + std::to_string(r) + " " + name + " at local token " +
                   std::to_string(k) + ": " + std::to_string(g) + ", unsharded " +
                   std::to_string(w);
        }
    }
  }
  return "";
}

// Seconds of one ring step's K/V exchange (two send_recv of `kv_bytes` each), the mean of
// kExchangeReps; "" in `wrong` when every rank received its previous rank's bytes.
double time_kv_exchange(gpu::DeviceSimWorld& world, std::size_t kv_bytes, std::string& wrong) {
  const int cp = world.size();
  const std::size_t count = kv_bytes / 2;  // 16-bit elements
  double seconds = 0.0;
  std::vector<std::string> problems(static_cast<std::size_t>(cp));
  world.run([&](gpu::DeviceSimComm& comm) {
    const int r = comm.rank(), next = (r + 1) % cp, prev = (r + cp - 1) % cp;
    std::vector<std::uint16_t> mine(count);
    for (std::size_t i = 0; i < count; ++i)
      mine[i] = token_bits(r, static_cast<std::int64_t>(i % 65536));
    const gpu::DeviceBuffer k = gpu::upload_vector(mine, comm.stream()),
                            v = gpu::upload_vector(mine, comm.stream());
    gpu::DeviceBuffer k_in(kv_bytes), v_in(kv_bytes);
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kExchangeReps; ++i) {
      comm.send_recv({k.get(), kv_bytes}, count, next, {k_in.get(), kv_bytes}, count, prev,
                     DType::bf16, 2 * i);
      comm.send_recv({v.get(), kv_bytes}, count, next, {v_in.get(), kv_bytes}, count, prev,
                     DType::bf16, 2 * i + 1);
    }
    comm.barrier();
    if (r == 0) seconds = seconds_since(start) / kExchangeReps;
    for (const gpu::DeviceBuffer* got : {&k_in, &v_in}) {
      const auto host = gpu::download_vector<std::uint16_t>(*got, count, comm.stream());
      for (std::size_t i = 0; i < count; ++i)
        if (host[i] != token_bits(prev, static_cast<std::int64_t>(i % 65536))) {
          problems[static_cast<std::size_t>(r)] =
              "rank " + std::to_string(r) + " received a wrong K/V element at " + std::to_string(i);
          break;
        }
    }
  });
  for (const auto& p : problems)
    if (wrong.empty()) wrong = p;
  return seconds;
}

void BM_gpu_cp_attention(benchmark::State& state, sim::AttentionAlgo algo) {
  const std::int64_t cp = state.range(0), len = state.range(1);
  const sim::AttentionShape shape{.heads = 8, .kv_heads = 2, .head_dim = 64, .dtype = DType::bf16};
  // The schedules and layouts first: a machine without a device still checks they build.
  const AttentionRow row = attention_row(cp, len, algo, shape);
  const AttentionRow whole = attention_row(1, len, sim::AttentionAlgo::ring, shape);
  if (skip_without_device(state)) return;
  const Inputs global{
      global_input(0, row.plan.padded_len, shape.heads, shape.head_dim, shape.dtype),
      global_input(1, row.plan.padded_len, shape.kv_heads, shape.head_dim, shape.dtype),
      global_input(2, row.plan.padded_len, shape.kv_heads, shape.head_dim, shape.dtype),
      global_input(3, row.plan.padded_len, shape.heads, shape.head_dim, shape.dtype)};
  auto local = [&](const AttentionRow& r) {
    std::vector<Inputs> in;
    for (const auto& index : r.plan.index)
      in.push_back({local_of(global.q, index), local_of(global.k, index), local_of(global.v, index),
                    local_of(global.grad_out, index)});
    return in;
  };
  const std::vector<Inputs> cp_inputs = local(row), whole_inputs = local(whole);
  const auto impl = gpu::make_gpu_implementation(gpu::GpuCommKind::device_sim);
  gpu::DeviceSimWorld world(static_cast<int>(cp)), alone(1);
  std::vector<CpAttentionOutput> cp_out(static_cast<std::size_t>(cp)), whole_out(1);
  std::vector<double> cp_seconds, whole_seconds;
  for (auto _ : state) {
    const double s = run_row(world, *impl, row, cp_inputs, cp_out);
    state.SetIterationTime(s);
    cp_seconds.push_back(s);
    whole_seconds.push_back(run_row(alone, *impl, whole, whole_inputs, whole_out));
  }
  const double cp_median = median_of(cp_seconds), whole_median = median_of(whole_seconds);
  const std::int64_t work = row.schedule.front().total_work;
  report_items(state, work);
  report_ratio(state, cp_median * static_cast<double>(state.iterations()), whole_median);
  state.counters["cp_seconds"] = cp_median;
  state.counters["cp_over_unsharded"] = whole_median > 0.0 ? cp_median / whole_median : 0.0;
  state.counters["critical_path_share"] =
      static_cast<double>(row.schedule.front().critical_path) / static_cast<double>(work);

  const gpu::RingStepBytes step =
      gpu::ring_step_bytes(row.plan.padded_len / cp, shape.kv_heads, shape.head_dim, shape.dtype);
  std::string wrong;
  if (cp > 1) {
    const double exchange =
        time_kv_exchange(world, static_cast<std::size_t>(step.forward / 2), wrong);
    // busbw of a point-to-point exchange is its algbw: the bytes each rank sends per second.
    state.counters["kv_busbw_GB/s"] =
        exchange > 0.0 ? static_cast<double>(step.forward) / exchange / 1e9 : 0.0;
    state.counters["kv_step_bytes"] = static_cast<double>(step.forward);
  }
  if (wrong.empty()) wrong = compare(row, cp_out, whole, whole_out.front(), 0.06);
  if (!wrong.empty()) state.SkipWithError(wrong.c_str());
}

const bool registered = [] {
  for (sim::AttentionAlgo algo : {sim::AttentionAlgo::ring, sim::AttentionAlgo::all_gather}) {
    benchmark::RegisterBenchmark(
        ("BM_gpu_cp_attention/" + std::string(sim::algo_name(algo))).c_str(), BM_gpu_cp_attention,
        algo)
        ->ArgNames({"C", "L"})
        ->Args({2, 4096})
        ->Args({4, 4096})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace cplab::bench
