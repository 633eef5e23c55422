// Device suite, the fused shifted cross entropy: forward and backward in one kernel per row of
// logits (an online log-sum-exp, then the gradient written once), against the unfused two-pass
// version (bench/gpu_unfused_ce.hpp, timed between the fused iterations) and against its byte
// roofline: reading the logits once and writing the gradient once at cudaMemcpy D2D speed.
#include <cmath>
#include <random>
#include <vector>

#include "bench/gpu_bench.hpp"
#include "bench/gpu_unfused_ce.hpp"
#include "core/dtype.hpp"
#include "gpu/kernels/loss_shifted_ce.hpp"

namespace cplab::bench {
namespace {

void BM_gpu_fused_ce(benchmark::State& state, gpu::LossElem in) {
  if (skip_without_device(state)) return;
  const std::int64_t rows = state.range(0), vocab = state.range(1);
  const std::int64_t in_bytes = in == gpu::LossElem::f32 ? 4 : 2;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(static_cast<std::size_t>(rows * vocab));
  for (auto& x : logits) x = normal(rng);
  std::vector<bf16> narrow;
  if (in == gpu::LossElem::bf16) {
    for (float& x : logits) {
      narrow.emplace_back(x);
      x = static_cast<float>(narrow.back());  // the values the device reads
    }
  }
  std::vector<std::int64_t> targets(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    targets[r] = r % 7 == 6 ? -1 : static_cast<std::int64_t>(rng() % vocab);
  const gpu::DeviceBuffer d_logits = in == gpu::LossElem::f32 ? gpu::upload_vector(logits, nullptr)
                                                              : gpu::upload_vector(narrow, nullptr);
  const gpu::DeviceBuffer d_targets = gpu::upload_vector(targets, nullptr);
  gpu::DeviceBuffer grad(static_cast<std::size_t>(rows * vocab) * 4),
      row_loss(static_cast<std::size_t>(rows) * 4);
  const float scale = 2.0f / static_cast<float>(rows);
  const gpu::FusedCe args{.logits = d_logits.get(),
                          .logits_elem = in,
                          .grad = grad.get(),
                          .grad_elem = gpu::LossElem::f32,
                          .rows = rows,
                          .vocab = vocab,
                          .targets = d_targets.as<std::int64_t>(),
                          .scale = scale,
                          .row_loss = row_loss.as<float>()};
  gpu::DeviceBuffer lse_scratch(static_cast<std::size_t>(rows) * 4);
  std::vector<double> fused_seconds, unfused_seconds;
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = time_on_device(nullptr, [&] { gpu::fused_shifted_ce(args, nullptr); });
    state.SetIterationTime(s);
    seconds += s;
    fused_seconds.push_back(s);
    unfused_seconds.push_back(time_on_device(
        nullptr, [&] { unfused_shifted_ce(args, lse_scratch.as<float>(), nullptr); }));
  }
  // Bytes the loss must move at least: the logits read once, the gradient written once.
  const std::int64_t logits_bytes = rows * vocab * in_bytes, grad_bytes = rows * vocab * 4;
  report_bandwidth(state, logits_bytes + grad_bytes, rows, seconds, cuda_memcpy_gbps(logits_bytes));
  state.counters["roofline_ratio"] = state.counters["ratio_to_baseline"];
  state.counters["unfused_ratio"] = median_of(unfused_seconds) / median_of(fused_seconds);
  state.counters["rows/s"] =
      seconds > 0.0 ? static_cast<double>(rows * state.iterations()) / seconds : 0.0;

  // The unfused version's outputs are checked like the fused one's below: both are compared with
  // double precision on the same rows, the fused kernel's last.
  const auto check_rows = [&](const char* who) -> bool {
    // A few rows, contributing and not, against double precision.
    const auto losses =
        gpu::download_vector<float>(row_loss, static_cast<std::size_t>(rows), nullptr);
    const auto g = gpu::download_vector<float>(grad, static_cast<std::size_t>(8 * vocab), nullptr);
    for (std::int64_t r = 0; r < 8; ++r) {
      const float* z = logits.data() + r * vocab;
      double m = -INFINITY, s = 0.0;
      for (std::int64_t v = 0; v < vocab; ++v) m = std::max(m, static_cast<double>(z[v]));
      for (std::int64_t v = 0; v < vocab; ++v) s += std::exp(static_cast<double>(z[v]) - m);
      const double lse = m + std::log(s);
      const std::int64_t y = targets[r];
      const double ce = y < 0 ? 0.0 : lse - static_cast<double>(z[y]);
      bool ok = std::abs(losses[r] - ce) <= 1e-5 * std::max(1.0, std::abs(ce));
      for (std::int64_t v = 0; ok && v < vocab; ++v) {
        const double want =
            y < 0 ? 0.0
                  : (std::exp(static_cast<double>(z[v]) - lse) - (v == y ? 1.0 : 0.0)) * scale;
        ok = std::abs(g[r * vocab + v] - want) <= 1e-5 * (std::abs(want) + 1e-3 * scale);
      }
      if (!ok) {
        state.SkipWithError((std::string(who) + " CE: row " + std::to_string(r) +
                             " differs from the double-precision loss or gradient")
                                .c_str());
        return false;
      }
    }
    return true;
  };
  if (!check_rows("unfused")) return;
  gpu::fused_shifted_ce(args, nullptr);
  check_rows("fused");
}

const bool registered = [] {
  // 4096 tokens × 32768 classes: 512 MiB of f32 logits (256 MiB bf16), 512 MiB of gradient.
  benchmark::RegisterBenchmark("BM_gpu_fused_ce/f32", BM_gpu_fused_ce, gpu::LossElem::f32)
      ->Args({4096, 32768})
      ->UseManualTime();
  benchmark::RegisterBenchmark("BM_gpu_fused_ce/bf16", BM_gpu_fused_ce, gpu::LossElem::bf16)
      ->Args({4096, 32768})
      ->UseManualTime();
  benchmark::RegisterBenchmark("BM_gpu_fused_ce/bf16_vocab_not_aligned", BM_gpu_fused_ce,
                               gpu::LossElem::bf16)
      ->Args({1024, 50257})
      ->UseManualTime();
  return true;
}();

}  // namespace
}  // namespace cplab::bench
