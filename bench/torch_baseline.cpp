#include "bench/torch_baseline.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>

#include "bench/bench_support.hpp"

namespace cplab::bench {

bool torch_available() { return true; }

TorchCe torch_cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t rows,
                            std::int64_t vocab, int threads, int repeats) {
  at::set_num_threads(threads);
  const at::Tensor z = at::from_blob(const_cast<float*>(logits), {rows, vocab}, at::kFloat)
                           .clone()
                           .set_requires_grad(true);
  const at::Tensor y = at::from_blob(const_cast<std::int64_t*>(targets), {rows}, at::kLong).clone();
  TorchCe out;
  out.seconds = 1e30;
  for (int i = 0; i < repeats; ++i) {
    if (z.grad().defined()) z.mutable_grad().reset();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    at::Tensor loss = at::cross_entropy_loss(z, y, {}, at::Reduction::Mean, -100);
    loss.backward();
    const double cpu = process_cpu_seconds() - cpu_start;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s < out.seconds) {
      out.seconds = s;
      out.cpu_seconds = cpu;
    }
    out.loss = loss.item<double>();
  }
  const at::Tensor g = z.grad().contiguous();
  out.grad.assign(g.data_ptr<float>(), g.data_ptr<float>() + rows * vocab);
  return out;
}

}  // namespace cplab::bench
