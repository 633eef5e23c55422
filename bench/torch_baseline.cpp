#include "bench/torch_baseline.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>

#include "bench/bench_support.hpp"

namespace cplab::bench {

bool torch_available() { return true; }

struct TorchCrossEntropy::State {
  int threads;
  at::Tensor z, y, loss;
};

TorchCrossEntropy::TorchCrossEntropy(const float* logits, const std::int64_t* targets,
                                     std::int64_t rows, std::int64_t vocab, int threads)
    : state_(std::make_unique<State>()) {
  state_->threads = threads;
  state_->z = at::from_blob(const_cast<float*>(logits), {rows, vocab}, at::kFloat)
                  .clone()
                  .set_requires_grad(true);
  state_->y = at::from_blob(const_cast<std::int64_t*>(targets), {rows}, at::kLong).clone();
}

TorchCrossEntropy::~TorchCrossEntropy() = default;

TorchCeRun TorchCrossEntropy::run() {
  at::set_num_threads(state_->threads);
  if (state_->z.grad().defined()) state_->z.mutable_grad().reset();
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  state_->loss = at::cross_entropy_loss(state_->z, state_->y, {}, at::Reduction::Mean, -100);
  state_->loss.backward();
  return {.seconds = seconds_since(start), .cpu_seconds = process_cpu_seconds() - cpu_start};
}

double TorchCrossEntropy::loss() const { return state_->loss.item<double>(); }

std::vector<float> TorchCrossEntropy::grad() const {
  const at::Tensor g = state_->z.grad().contiguous();
  return {g.data_ptr<float>(), g.data_ptr<float>() + g.numel()};
}

}  // namespace cplab::bench
