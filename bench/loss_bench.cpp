// The CPU shifted cross entropy, forward and backward, through the twin's own path
// (SimImplementation::shifted_cp_loss on every rank of a ThreadComm World: the label exchange,
// the global count, the fused loss and gradient) on [1, S, V] f32 logits, against libtorch's
// cross_entropy + backward on the same logits and targets at the same thread count (ranks =
// threads), and against the byte roofline: reading the logits and writing the gradient once at
// this process's memcpy speed. Timed in CPU seconds of the process (all ranks' threads); libtorch
// runs once after every iteration of the twin, and the best run of each side is compared.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "bench/bench_layouts.hpp"
#include "bench/bench_support.hpp"
#include "bench/cpu_suites.hpp"
#include "bench/torch_baseline.hpp"
#include "comm/thread_comm.hpp"
#include "core/token_moves.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::bench {
namespace {

constexpr std::int64_t kIgnore = -100;

// Minor page faults of the process so far: a side that faults in fresh buffers on every run
// (libtorch's allocator returns large blocks to the system) pays for it in CPU seconds; the
// counters show how much of a ratio is that rather than arithmetic.
double minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_minflt);
}

void BM_cpu_shifted_ce(benchmark::State& state) {
  const auto threads = static_cast<std::int64_t>(state.range(0));
  const std::int64_t len = state.range(1), vocab = state.range(2);
  const RowPartition part = partition_row(a_balanced_layout(), threads, len);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  Tensor logits(DType::f32, {1, part.padded_len, vocab}, Uninitialized{});
  for (float& x : logits.data<float>()) x = normal(rng);
  Tensor labels(DType::i64, {1, part.padded_len});
  for (std::int64_t& y : labels.data<std::int64_t>())
    y = rng() % 9 == 0 ? kIgnore : static_cast<std::int64_t>(rng() % vocab);
  std::vector<Tensor> local_logits, local_labels;
  for (const ShardLayout& r : part.ranks) {
    local_logits.push_back(take_tokens(logits, 1, r.index, r.local_len()));
    local_labels.push_back(take_tokens(labels, 1, r.index, r.local_len()));
  }
  // The shifted targets in global order: what libtorch is given.
  const auto y = labels.data<std::int64_t>();
  std::vector<std::int64_t> targets(static_cast<std::size_t>(part.padded_len), kIgnore);
  for (std::int64_t t = 0; t + 1 < part.padded_len; ++t) targets[t] = y[t + 1];
  std::optional<TorchCrossEntropy> torch;
  if (torch_available()) {
    torch.emplace(logits.data<float>().data(), targets.data(), part.padded_len, vocab,
                  static_cast<int>(threads));
  }
  sim::SimImplementation impl;
  sim::World world(static_cast<int>(threads));
  std::vector<LossOutput> outputs(static_cast<std::size_t>(threads));
  // Per iteration the twin, then (untimed by the loop) libtorch once, so both see the same
  // machine; each side's best run is compared (on a shared machine the other runs mostly measure
  // waits for a core and a cache that other jobs emptied).
  std::vector<double> cpu_seconds, torch_cpu_seconds, torch_seconds, faults, torch_faults;
  for (auto _ : state) {
    const double faults_start = minor_faults();
    const double cpu_start = process_cpu_seconds();
    world.run([&](sim::RankContext& ctx) {
      const auto r = static_cast<std::size_t>(ctx.rank);
      outputs[r] = impl.shifted_cp_loss(ctx.comm, part.ranks[r], local_logits[r], local_labels[r],
                                        Tensor(), 1);
    });
    cpu_seconds.push_back(process_cpu_seconds() - cpu_start);
    faults.push_back(minor_faults() - faults_start);
    if (torch) {
      state.PauseTiming();
      const double torch_faults_start = minor_faults();
      const TorchCeRun run = torch->run();
      torch_faults.push_back(minor_faults() - torch_faults_start);
      torch_cpu_seconds.push_back(run.cpu_seconds);
      torch_seconds.push_back(run.seconds);
      state.ResumeTiming();
    }
  }
  const double best = *std::min_element(cpu_seconds.begin(), cpu_seconds.end());
  const std::int64_t bytes = 2 * part.padded_len * vocab * 4;  // logits read, gradient written
  const double roofline_gbps = memcpy_gbps(std::int64_t{1} << 28, /*cpu_time=*/true);
  report_bandwidth(state, bytes, part.padded_len, best * static_cast<double>(state.iterations()),
                   roofline_gbps);
  state.counters["roofline_ratio"] = state.counters["ratio_to_baseline"];
  state.counters["cpu_seconds"] = best;
  state.counters["page_faults"] = median_of(faults);  // per iteration

  double twin_mean = 0.0;
  for (const LossOutput& out : outputs) twin_mean += out.loss / static_cast<double>(threads);
  if (!torch) {
    state.SetLabel("baseline: byte roofline (no libtorch in this build)");
    return;
  }
  // CPU seconds on both sides: on a shared machine wall time mostly measures waits for a core.
  const double torch_best = *std::min_element(torch_cpu_seconds.begin(), torch_cpu_seconds.end());
  state.counters["libtorch_seconds"] =
      *std::min_element(torch_seconds.begin(), torch_seconds.end());
  state.counters["libtorch_cpu_seconds"] = torch_best;
  state.counters["libtorch_page_faults"] = median_of(torch_faults);  // per run
  state.counters["ratio_to_baseline"] = torch_best / best;
  state.SetLabel("baseline: libtorch cross_entropy+backward");
  const double torch_loss = torch->loss();
  const std::vector<float> torch_grad = torch->grad();
  // The output check: the mean of the rank losses is libtorch's mean, and every rank's gradient
  // is C × libtorch's at its tokens.
  if (std::abs(twin_mean - torch_loss) > 1e-5 * std::max(1.0, std::abs(torch_loss))) {
    state.SkipWithError("shifted CE: the twin's mean loss differs from libtorch's");
    return;
  }
  for (std::size_t r = 0; r < part.ranks.size(); ++r) {
    const auto g = outputs[r].grad.data<float>();
    const auto& index = part.ranks[r].index[0];
    for (std::size_t k = 0; k < index.size(); ++k) {
      for (std::int64_t v = 0; v < vocab; ++v) {
        const double want = static_cast<double>(threads) * torch_grad[index[k] * vocab + v];
        if (std::abs(g[k * vocab + v] - want) > 1e-7 + 1e-4 * std::abs(want)) {
          state.SkipWithError("shifted CE: a gradient differs from C × libtorch's");
          return;
        }
      }
    }
  }
}

}  // namespace

void register_loss_benchmarks() {
  // 2048 tokens × 32000 classes: 262 MB of f32 logits; ranks (threads) 1 and 2.
  benchmark::RegisterBenchmark("BM_cpu_shifted_ce", BM_cpu_shifted_ce)
      ->ArgNames({"threads", "S", "V"})
      ->Args({1, 2048, 32000})
      ->Args({2, 2048, 32000})
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace cplab::bench
