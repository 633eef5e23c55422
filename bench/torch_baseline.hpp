#pragma once
// libtorch's cross entropy as a same-process baseline (built only with libtorch; elsewhere
// torch_available() is false and the loss benchmark measures against its byte roofline only).
#include <cstdint>
#include <vector>

namespace cplab::bench {

bool torch_available();

struct TorchCe {
  double seconds = 0.0;      // best of the repeats: forward + backward, wall time
  double cpu_seconds = 0.0;  // the same repeat's CPU seconds of the whole process
  double loss = 0.0;         // mean over the targets that are not -100
  std::vector<float> grad;   // [rows, vocab]
};

// at::cross_entropy_loss (mean, ignore_index -100) forward and backward on logits [rows, vocab]
// with targets[rows], on `threads` intra-op threads (at::set_num_threads).
TorchCe torch_cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t rows,
                            std::int64_t vocab, int threads, int repeats);

}  // namespace cplab::bench
