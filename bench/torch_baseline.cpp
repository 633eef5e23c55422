#include "bench/torch_baseline.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cmath>

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

struct TorchAttention::State {
  int threads;
  std::int64_t len, heads, head_dim;
  at::Tensor q, k, v, grad_out, mask, out;
};

TorchAttention::TorchAttention(const float* q, const float* k, const float* v,
                               const float* grad_out, std::int64_t len, std::int64_t heads,
                               std::int64_t head_dim, int threads)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.threads = threads;
  s.len = len;
  s.heads = heads;
  s.head_dim = head_dim;
  // [L, H, d] → [H, L, d], the layout the batched matmuls want.
  const auto heads_first = [&](const float* p) {
    return at::from_blob(const_cast<float*>(p), {len, heads, head_dim}, at::kFloat)
        .permute({1, 0, 2})
        .contiguous();
  };
  s.q = heads_first(q).set_requires_grad(true);
  s.k = heads_first(k).set_requires_grad(true);
  s.v = heads_first(v).set_requires_grad(true);
  s.grad_out = heads_first(grad_out);
  s.mask = at::ones({len, len}, at::kBool).triu(1);  // true where the key is after the query
}

TorchAttention::~TorchAttention() = default;

TorchCeRun TorchAttention::run() {
  State& s = *state_;
  at::set_num_threads(s.threads);
  for (at::Tensor* t : {&s.q, &s.k, &s.v}) {
    if (t->grad().defined()) t->mutable_grad().reset();
  }
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  const at::Tensor scores = at::matmul(s.q, s.k.transpose(1, 2)).mul(scale);
  const at::Tensor probs = at::softmax(scores.masked_fill(s.mask, -INFINITY), -1);
  s.out = at::matmul(probs, s.v);
  s.out.backward(s.grad_out);
  return {.seconds = seconds_since(start), .cpu_seconds = process_cpu_seconds() - cpu_start};
}

namespace {
std::vector<float> tokens_first(const at::Tensor& t) {
  const at::Tensor c = t.detach().permute({1, 0, 2}).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}
}  // namespace

std::vector<float> TorchAttention::out() const { return tokens_first(state_->out); }

std::vector<float> TorchAttention::grad(int which) const {
  const at::Tensor* of[] = {&state_->q, &state_->k, &state_->v};
  return tokens_first(of[which]->grad());
}

}  // namespace cplab::bench
