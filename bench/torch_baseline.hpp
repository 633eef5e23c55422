#pragma once
// libtorch's cross entropy as a same-process baseline (built only with libtorch; elsewhere
// torch_available() is false and the loss benchmark measures against its byte roofline only).
#include <cstdint>
#include <memory>
#include <vector>

namespace cplab::bench {

bool torch_available();

struct TorchCeRun {
  double seconds = 0.0;      // forward + backward, wall time
  double cpu_seconds = 0.0;  // CPU seconds of the whole process meanwhile
};

// at::cross_entropy_loss (mean, ignore_index -100) forward and backward on logits [rows, vocab]
// with targets[rows], on `threads` intra-op threads (at::set_num_threads). The inputs are copied
// into libtorch tensors once; every run() is one forward + backward, so that a benchmark can run
// it between its own iterations (both then see the same machine).
class TorchCrossEntropy {
 public:
  TorchCrossEntropy(const float* logits, const std::int64_t* targets, std::int64_t rows,
                    std::int64_t vocab, int threads);
  ~TorchCrossEntropy();
  TorchCeRun run();
  // Of the last run: the mean over the targets that are not -100, and the gradient [rows, vocab].
  double loss() const;
  std::vector<float> grad() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Unsharded causal multi-head attention as libtorch's math (not a fused kernel): S = q·kᵀ/sqrt(d),
// masked to key <= query, softmax, ·v, and autograd's backward from grad_out, all f32 on
// `threads` intra-op threads. q, k, v, grad_out are [L, H, d] (H_kv = H); copied in once.
class TorchAttention {
 public:
  TorchAttention(const float* q, const float* k, const float* v, const float* grad_out,
                 std::int64_t len, std::int64_t heads, std::int64_t head_dim, int threads);
  ~TorchAttention();
  TorchCeRun run();  // one forward + backward
  // Of the last run, [L, H, d]: the output and the three gradients.
  std::vector<float> out() const;
  std::vector<float> grad(int which) const;  // 0: dQ, 1: dK, 2: dV

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cplab::bench
